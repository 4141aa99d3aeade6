// Package servertest is a fake editor for tests of the daemon: it connects to a server over a real jsonrpc2
// stream, answers the server's requests (workspace/configuration, progress tokens), and records every
// notification so that tests wait on events instead of sleeping.
package servertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/server"
	"go.lsp.dev/uri"
)

// Notification is one notification the server sent.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Client is the fake editor.
type Client struct {
	Conn jsonrpc2.Conn
	// Settings is what the client answers to workspace/configuration.
	Settings json.RawMessage
	// ExitCode receives the server's exit code when Serve returns.
	ExitCode chan int
	// OnRequest, when set, answers the server's requests other than workspace/configuration (alisio/approve).
	OnRequest func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// Experimental is sent as capabilities.experimental by Initialize.
	Experimental any

	mu       sync.Mutex
	notes    []Notification
	changed  chan struct{}
	requests []string
}

// Start runs a server with opts on one end of a pipe and returns a client on the other.
func Start(t testing.TB, opts server.Options) *Client {
	t.Helper()
	a, b := net.Pipe()
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	c := &Client{ExitCode: make(chan int, 1), changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { c.ExitCode <- server.Serve(ctx, a, opts) }()
	c.Conn = jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	c.Conn.Go(ctx, c.handle)
	t.Cleanup(func() {
		cancel()
		_ = c.Conn.Close()
		_ = a.Close()
		select {
		case <-c.ExitCode:
		case <-time.After(5 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return c
}

// handle answers the server's requests and records its notifications; replies run off the read loop.
func (c *Client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	if _, ok := req.(*jsonrpc2.Call); ok {
		c.mu.Lock()
		c.requests = append(c.requests, req.Method())
		settings, onRequest := c.Settings, c.OnRequest
		c.mu.Unlock()
		go func() {
			switch req.Method() {
			case "workspace/configuration":
				if settings == nil {
					settings = json.RawMessage("null")
				}
				_ = reply(ctx, []json.RawMessage{settings}, nil)
			default:
				if onRequest != nil {
					res, err := onRequest(ctx, req.Method(), req.Params())
					_ = reply(ctx, res, err)
					return
				}
				_ = reply(ctx, nil, nil)
			}
		}()
		return nil
	}
	c.mu.Lock()
	c.notes = append(c.notes, Notification{req.Method(), append(json.RawMessage(nil), req.Params()...)})
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return nil
}

// Call sends a request and decodes its result into result (may be nil).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	_, err := c.Conn.Call(ctx, method, params, result)
	return err
}

// Notify sends a notification.
func (c *Client) Notify(method string, params any) error {
	return c.Conn.Notify(context.Background(), method, params)
}

// Notifications returns the notifications of method received so far (all when method is empty).
func (c *Client) Notifications(method string) []Notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Notification
	for _, n := range c.notes {
		if method == "" || n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

// ServerRequests returns the methods of the requests the server sent.
func (c *Client) ServerRequests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.requests...)
}

// Await waits until cond holds on the notifications received, or fails after timeout.
func (c *Client) Await(t testing.TB, timeout time.Duration, what string, cond func([]Notification) bool) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		c.mu.Lock()
		notes := append([]Notification(nil), c.notes...)
		ch := c.changed
		c.mu.Unlock()
		if cond(notes) {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Initialize sends initialize (with the given initializationOptions and capabilities) and initialized.
func (c *Client) Initialize(ctx context.Context, root string, options any, workDoneProgress, configuration bool) (map[string]any, error) {
	var res map[string]any
	err := c.Call(ctx, "initialize", map[string]any{
		"processId": 1, "rootUri": string(uri.File(root)), "initializationOptions": options,
		"capabilities": map[string]any{"window": map[string]any{"workDoneProgress": workDoneProgress},
			"workspace": map[string]any{"configuration": configuration}, "experimental": c.Experimental},
	}, &res)
	if err != nil {
		return nil, err
	}
	return res, c.Notify("initialized", map[string]any{})
}

// Frame encodes body with LSP framing, for raw-input tests.
func Frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// RawPipe runs a server on a pipe and returns the raw client end, for tests that send malformed bytes.
func RawPipe(t testing.TB, opts server.Options) (io.ReadWriteCloser, chan int) {
	a, b := net.Pipe()
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	code := make(chan int, 1)
	go func() { code <- server.Serve(context.Background(), a, opts) }()
	t.Cleanup(func() { _ = b.Close(); _ = a.Close() })
	return b, code
}
