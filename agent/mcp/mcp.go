// Package mcp makes MCP servers tool sources of the agent, through the official Go SDK: a server's tools join
// the catalog under its name as prefix, and every failure of a server — missing, crashed, hung, invalid
// schemas, content that is not text — becomes something the user or the model can read, never a stuck turn.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/internal/limitio"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// DefaultCallTimeout bounds a tool call when mcpServers.NAME.timeoutMs is 0; connecting and listing tools
// are bounded by ConnectTimeout.
const (
	DefaultCallTimeout = 60 * time.Second
	ConnectTimeout     = 30 * time.Second
)

// Server is a connected MCP server: a tools.Source.
type Server struct {
	name    string
	timeout time.Duration
	session *mcp.ClientSession
	specs   []provider.ToolSpec
	remote  map[string]string // catalog name → the server's own tool name
	// Warnings say what was left out of its tools (invalid schemas, clashing names).
	Warnings []string

	mu     sync.Mutex
	broken error // set once the connection is gone
	// overflow is set when an HTTP response passed MaxMessageBytes (the SDK then reports no cause).
	overflow *atomic.Bool
}

// Connect starts (stdio) or reaches (streamable HTTP) the server cfg describes and lists its tools. A stdio
// server runs in workspace with the safe part of the daemon's environment (no API keys) plus cfg.Env.
func Connect(ctx context.Context, name string, cfg config.MCPServer, workspace string) (*Server, error) {
	var transport mcp.Transport
	overflow := new(atomic.Bool)
	if cfg.URL != "" {
		transport = &mcp.StreamableClientTransport{Endpoint: cfg.URL, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: cappedTransport{http.DefaultTransport, overflow}}}
	} else {
		path, err := exec.LookPath(cfg.Command)
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: command %q not found: install it or fix mcpServers.%s.command", name, cfg.Command, name)
		}
		cmd := exec.Command(path, cfg.Args...)
		cmd.Dir = workspace
		cmd.Env = tools.SafeEnv(os.Environ())
		for k, v := range cfg.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Stderr = io.Discard
		// Its own process group, killed with the daemon (Linux's parent-death signal; elsewhere the server
		// sees its stdin close) so that no server outlives it.
		osproc.Group(cmd)
		osproc.DieWithParent(cmd)
		transport = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "alisio-lsp", Version: "1"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return nil, fmt.Errorf("MCP server %s: connecting: %w", name, err)
	}
	s := &Server{name: name, session: session, remote: map[string]string{}, timeout: DefaultCallTimeout, overflow: overflow}
	if cfg.TimeoutMs > 0 {
		s.timeout = time.Duration(cfg.TimeoutMs) * time.Millisecond
	}
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			_ = session.Close()
			return nil, fmt.Errorf("MCP server %s: listing its tools: %w", name, err)
		}
		s.add(t)
	}
	return s, nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// add puts tool t in the catalog as NAME__tool (providers accept [A-Za-z0-9_-]{1,64}), or notes why not.
func (s *Server) add(t *mcp.Tool) {
	catalog := s.name + "__" + unsafeName.ReplaceAllString(t.Name, "_")
	if len(catalog) > 64 {
		catalog = catalog[:64]
	}
	schema, err := inputSchema(t.InputSchema)
	switch {
	case err != nil:
		s.Warnings = append(s.Warnings, fmt.Sprintf("tool %q skipped: %v", t.Name, err))
		return
	case s.remote[catalog] != "":
		s.Warnings = append(s.Warnings, fmt.Sprintf("tool %q skipped: its catalog name %s is taken by %q", t.Name, catalog, s.remote[catalog]))
		return
	}
	s.remote[catalog] = t.Name
	s.specs = append(s.specs, provider.ToolSpec{Name: catalog, Description: t.Description, Parameters: schema})
}

// inputSchema checks that a tool's input schema is a JSON Schema of an object, as providers require.
func inputSchema(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "null" {
		return nil, errors.New("no input schema")
	}
	var obj map[string]any
	if json.Unmarshal(raw, &obj) != nil {
		return nil, errors.New("its input schema is not a JSON object")
	}
	if typ, ok := obj["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("its input schema describes %v, not an object", typ)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(raw)))
	if err == nil {
		c := jsonschema.NewCompiler()
		if err = c.AddResource("tool.json", doc); err == nil {
			_, err = c.Compile("tool.json")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("invalid input schema: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	return raw, nil
}

// Name is the server's configured name.
func (s *Server) Name() string { return s.name }

// Specs are its tools as the catalog lists them.
func (s *Server) Specs() []provider.ToolSpec { return s.specs }

// Call runs one tool call. A call the server never answered (it crashed or hung past its timeout) says that
// its outcome is unknown: it may have taken effect.
func (s *Server) Call(ctx context.Context, tool, arguments string) (string, bool) {
	s.mu.Lock()
	broken := s.broken
	s.mu.Unlock()
	if broken != nil {
		return fmt.Sprintf("Error: the MCP server %s is not running (%v); its tools cannot be used until it is restarted (re-enable it or restart alisio-lsp)", s.name, broken), true
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return fmt.Sprintf("Error: the arguments of %s are not a JSON object: %v", tool, err), true
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := s.session.CallTool(ctx, &mcp.CallToolParams{Name: s.remote[tool], Arguments: args})
	switch {
	case err == nil:
		return render(res), res.IsError
	case s.overflow.Load() || strings.Contains(err.Error(), "exceeded the configured maximum line length"):
		// The SDK reports an oversized stdio frame as text only (its error value is unexported).
		s.mu.Lock()
		s.broken = fmt.Errorf("it sent a message over %d MB", MaxMessageBytes>>20)
		s.mu.Unlock()
		return fmt.Sprintf("Error: the MCP server %s sent a result larger than the %d MB alisio reads from a server, so alisio stopped reading, kept nothing of it and closed the connection; "+
			"the outcome of this call is unknown. Ask the tool for less (a narrower query or a range); the server's tools come back when it is re-enabled or alisio-lsp restarts", s.name, MaxMessageBytes>>20), true
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("Error: the MCP server %s did not answer within %v; the outcome of this call is unknown (it may or may not have taken effect)", s.name, s.timeout), true
	case ctx.Err() != nil:
		return "Error: the call was cancelled; its outcome is unknown", true
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF):
		s.mu.Lock()
		s.broken = err
		s.mu.Unlock()
		return fmt.Sprintf("Error: the MCP server %s stopped during the call; the outcome of this call is unknown (it may or may not have taken effect)", s.name), true
	}
	return fmt.Sprintf("Error: the MCP server %s refused the call: %v", s.name, err), true
}

// MaxMessageBytes bounds one message read from an MCP server: over stdio the SDK's own frame limit, over
// HTTP a cap on each response body. The model sees at most the tool output cap of any result anyway.
const MaxMessageBytes = mcp.DefaultMaxLineLength

// cappedTransport stops reading a response body after MaxMessageBytes and sets overflow.
type cappedTransport struct {
	next     http.RoundTripper
	overflow *atomic.Bool
}

func (c cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = limitio.ReadCloser(resp.Body, MaxMessageBytes, func() error {
			c.overflow.Store(true)
			return fmt.Errorf("the MCP server's response is over %d MB", MaxMessageBytes>>20)
		})
	}
	return resp, err
}

// render turns a result's content into text: text as is, other kinds described.
func render(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %s, not shown]", c.Resource.URI, c.Resource.MIMEType))
			}
		default:
			raw, _ := json.Marshal(c)
			parts = append(parts, fmt.Sprintf("[content not shown: %s]", clip(string(raw), 200)))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		raw, _ := json.Marshal(res.StructuredContent)
		parts = append(parts, string(raw))
	}
	return strings.Join(parts, "\n")
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Problem says what the user should know about this server's tools: those left out, or that it stopped.
func (s *Server) Problem() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return "stopped: " + s.broken.Error()
	}
	return strings.Join(s.Warnings, "; ")
}

// Failed is a configured server that could not be started: a source with no tools that says why.
type Failed struct {
	ServerName string
	Err        error
}

// Name is the server's name.
func (f Failed) Name() string { return f.ServerName }

// Specs is empty.
func (Failed) Specs() []provider.ToolSpec { return nil }

// Call is never reached (no tools).
func (f Failed) Call(context.Context, string, string) (string, bool) {
	return "Error: " + f.Err.Error(), true
}

// Problem is why it failed.
func (f Failed) Problem() string { return f.Err.Error() }

// Close ends the session (and a stdio server's process).
func (s *Server) Close() error { return s.session.Close() }
