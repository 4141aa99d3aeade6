// Package chat is `alisio-lsp chat`: an interactive terminal session that is an LSP client of the shared daemon,
// as the editors are. client.go speaks JSON-RPC to the daemon (initialize, the alisio/* methods,
// $/cancelRequest); model.go is the terminal UI on bubbletea; commands.go reads the slash commands; render.go
// draws a turn, the meter and the lists for a terminal.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/alisio-lsp/alisio-lsp/api"
)

// Client is the chat's connection to the daemon. What the daemon sends on its own (events, the meter, approval
// questions, messages for the user) arrives on Incoming, in order.
type Client struct {
	conn     jsonrpc2.Conn
	incoming chan any
}

// Approval is a question the daemon asks before a call runs; Answer replies to it once.
type Approval struct {
	api.ApproveParams
	id    jsonrpc2.ID
	reply jsonrpc2.Replier
}

// Withdrawn says that the daemon no longer waits for the answer to an approval (it timed out, or the turn
// stopped).
type Withdrawn struct{ id jsonrpc2.ID }

// Is says whether w withdraws a.
func (w Withdrawn) Is(a Approval) bool { return w.id == a.id }

// Answer tells the daemon whether the call may run.
func (a Approval) Answer(ctx context.Context, approved bool) error {
	return a.reply(ctx, api.ApproveResult{Approved: approved}, nil)
}

// Notice is a message the daemon shows the user (window/showMessage): Error is set for errors and warnings.
type Notice struct {
	Text  string
	Error bool
}

// Disconnected says that the connection to the daemon ended.
type Disconnected struct{ Err error }

// Connect speaks JSON-RPC over rwc (the daemon, through the forwarder), initializes it for workspace and
// returns the client; Close ends the session.
func Connect(ctx context.Context, rwc io.ReadWriteCloser, workspace, version string) (*Client, error) {
	c := &Client{conn: jsonrpc2.NewConn(jsonrpc2.NewStream(rwc)), incoming: make(chan any, 1024)}
	c.conn.Go(context.Background(), c.handle)
	go func() {
		<-c.conn.Done()
		c.incoming <- Disconnected{Err: c.conn.Err()}
	}()
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", workspace, err)
	}
	root := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	params := map[string]any{
		"processId": nil, "rootUri": root,
		"workspaceFolders": []map[string]string{{"uri": root, "name": filepath.Base(abs)}},
		"clientInfo":       map[string]string{"name": "alisio-lsp chat", "version": version},
		"capabilities": map[string]any{"experimental": map[string]any{"alisio": map[string]string{
			"approve": "request", "editor": api.EditorTerminal}}},
	}
	if err := c.Call(ctx, "initialize", params, nil); err != nil {
		c.conn.Close()
		return nil, fmt.Errorf("starting the session with the daemon: %w", err)
	}
	if err := c.conn.Notify(ctx, "initialized", map[string]any{}); err != nil {
		c.conn.Close()
		return nil, err
	}
	return c, nil
}

// Incoming delivers what the daemon sends: api.Event, api.Status, Approval, Notice, then Disconnected; and
// what was given to After.
func (c *Client) Incoming() <-chan any { return c.incoming }

// After delivers v on Incoming after everything the daemon sent before it. A call's result given to After as
// soon as Call returns comes after the call's notifications: the connection hands each notification to
// Incoming before it reads the next message, the call's response among them.
func (c *Client) After(v any) {
	select {
	case c.incoming <- v:
	case <-c.conn.Done(): // Disconnected says what to do
	}
}

// Call sends a request and decodes its result into result (when not nil). When ctx ends first the daemon is
// told to stop it ($/cancelRequest) and the error is ctx's.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	var raw json.RawMessage
	id, err := c.conn.Call(ctx, method, params, &raw)
	if ctx.Err() != nil {
		// The request is the daemon's to stop: a turn keeps what it did, a compaction leaves the session as it was.
		notify, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = c.conn.Notify(notify, "$/cancelRequest", map[string]any{"id": &id})
		return ctx.Err()
	}
	if err != nil {
		var rpcErr *jsonrpc2.Error
		if errors.As(err, &rpcErr) {
			return &RequestError{Message: rpcErr.Message, Data: rpcErr.Data}
		}
		return err
	}
	if result == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, result)
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.conn.Notify(ctx, method, params)
}

// Close ends the session as an editor does (shutdown, exit) and closes the connection.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.conn.Call(ctx, "shutdown", nil, nil)
	_ = c.conn.Notify(ctx, "exit", nil)
	return c.conn.Close()
}

// RequestError is the daemon's answer to a request that failed: its sentence for the user, and what it carries
// for a program (api.ErrorData).
type RequestError struct {
	Message string
	Data    *json.RawMessage
}

func (e *RequestError) Error() string { return e.Message }

// ErrorData is what the error carries (zero when nothing).
func (e *RequestError) ErrorData() api.ErrorData {
	var d api.ErrorData
	if e.Data == nil || json.Unmarshal(*e.Data, &d) != nil {
		return api.ErrorData{}
	}
	return d
}

// Kind is the error's api.ErrorKind ("" when it carries none).
func (e *RequestError) Kind() api.ErrorKind { return e.ErrorData().Kind }

// handle receives the daemon's notifications and requests; a question is answered later, from the UI.
func (c *Client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	params := req.Params()
	switch req.Method() {
	case "alisio/event":
		var ev api.Event
		if json.Unmarshal(params, &ev) == nil {
			c.incoming <- ev
		}
		return nil
	case "alisio/status":
		var st api.Status
		if json.Unmarshal(params, &st) == nil {
			c.incoming <- st
		}
		return nil
	case "alisio/approve":
		var p api.ApproveParams
		if err := json.Unmarshal(params, &p); err != nil {
			return reply(ctx, nil, fmt.Errorf("%w: %v", jsonrpc2.ErrInvalidParams, err))
		}
		var id jsonrpc2.ID
		if call, ok := req.(*jsonrpc2.Call); ok {
			id = call.ID()
		}
		c.incoming <- Approval{ApproveParams: p, id: id, reply: reply}
		return nil
	case "$/cancelRequest":
		var p struct {
			ID jsonrpc2.ID `json:"id"`
		}
		if json.Unmarshal(params, &p) == nil {
			c.incoming <- Withdrawn{id: p.ID}
		}
		return nil
	case "window/showMessage", "window/showMessageRequest":
		var m struct {
			Type    int    `json:"type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(params, &m) == nil {
			c.incoming <- Notice{Text: m.Message, Error: m.Type == 1 || m.Type == 2}
		}
	case "window/logMessage", "$/progress", "$/logTrace", "telemetry/event":
		return nil // the chat shows events and the meter instead
	}
	if _, isCall := req.(*jsonrpc2.Call); isCall {
		if req.Method() == "window/showMessageRequest" || req.Method() == "window/workDoneProgress/create" || req.Method() == "client/registerCapability" {
			return reply(ctx, nil, nil)
		}
		return jsonrpc2.MethodNotFoundHandler(ctx, reply, req)
	}
	return nil
}
