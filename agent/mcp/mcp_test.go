package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/alisio-lsp/alisio-lsp/config"
)

// TestMain doubles as an MCP server over stdio (the SDK's own server) when ALISIO_MCP_HELPER is set, so that
// the tests can make a real server process crash mid-call.
func TestMain(m *testing.M) {
	if os.Getenv("ALISIO_MCP_HELPER") == "1" {
		s := mcp.NewServer(&mcp.Implementation{Name: "helper"}, nil)
		addTools(s)
		_ = s.Run(context.Background(), &mcp.StdioTransport{})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var objectSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)

// addTools gives a server the tools the failure tests need.
func addTools(s *mcp.Server) {
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "echo", InputSchema: objectSchema}, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		_ = json.Unmarshal(r.Params.Arguments, &a)
		return text(a.Text), nil
	})
	s.AddTool(&mcp.Tool{Name: "env", Description: "environment", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("key=" + os.Getenv("OPENAI_API_KEY") + " listed=" + os.Getenv("LISTED")), nil
	})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "exits mid-call", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang", Description: "never answers", InputSchema: objectSchema}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		time.Sleep(time.Hour)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "flood", Description: "an oversized result", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strings.Repeat("x", 40<<20)), nil
	})
	s.AddTool(&mcp.Tool{Name: "picture", Description: "an image", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here:"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("12345678")}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "bad schema", Description: "not an object", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"nonsense"}}}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("never"), nil
	})
}

func helperServer(t *testing.T, env map[string]string, timeoutMs int) *Server {
	t.Helper()
	cfgEnv := map[string]string{"ALISIO_MCP_HELPER": "1"}
	for k, v := range env {
		cfgEnv[k] = v
	}
	s, err := Connect(context.Background(), "helper", config.MCPServer{Command: os.Args[0], Env: cfgEnv, TimeoutMs: timeoutMs}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestHelperServer_FailureModes: a stdio server built with the SDK; its invalid schema is skipped with a
// warning, non-text content is described, the API key is not passed unless listed, a hang is cut by the
// timeout and a crash mid-call says the outcome is unknown, and later calls say the server stopped.
func TestHelperServer_FailureModes(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	s := helperServer(t, map[string]string{"LISTED": "yes"}, 300)
	names := map[string]bool{}
	for _, sp := range s.Specs() {
		names[sp.Name] = true
	}
	if !names["helper__echo"] || names["helper__bad_schema"] || !strings.Contains(s.Problem(), `tool "bad schema" skipped`) {
		t.Fatalf("tools %v, problem %q", names, s.Problem())
	}
	if out, isErr := s.Call(context.Background(), "helper__echo", `{"text":"hi"}`); isErr || out != "hi" {
		t.Fatalf("echo: %q %v", out, isErr)
	}
	if out, _ := s.Call(context.Background(), "helper__env", `{}`); out != "key= listed=yes" {
		t.Fatalf("environment: %q (the API key must not reach the server; its env must)", out)
	}
	if out, _ := s.Call(context.Background(), "helper__picture", `{}`); out != "here:\n[image image/png, 8 bytes, not shown]" {
		t.Fatalf("image: %q", out)
	}
	start := time.Now()
	if out, isErr := s.Call(context.Background(), "helper__hang", `{}`); !isErr || !strings.Contains(out, "did not answer within 300ms") || !strings.Contains(out, "outcome of this call is unknown") {
		t.Fatalf("hang: %q", out)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("a hung call held the turn")
	}
	if out, isErr := s.Call(context.Background(), "helper__crash", `{}`); !isErr || !strings.Contains(out, "outcome of this call is unknown") {
		t.Fatalf("crash: %q", out)
	}
	if out, isErr := s.Call(context.Background(), "helper__echo", `{"text":"again"}`); !isErr || !strings.Contains(out, "not running") {
		t.Fatalf("after the crash: %q", out)
	}
	if !strings.Contains(s.Problem(), "stopped") {
		t.Fatalf("problem after the crash: %q", s.Problem())
	}
}

// TestOversizedResults: a result over MaxMessageBytes ends the call with a message that says so, over stdio
// and over HTTP, and the server is then reported as stopped.
func TestOversizedResults(t *testing.T) {
	for _, s := range []*Server{helperServer(t, nil, 0), httpServer(t)} {
		out, isErr := s.Call(context.Background(), s.Name()+"__flood", `{}`)
		if !isErr || !strings.Contains(out, "larger than the 16 MB") || len(out) > 500 {
			t.Fatalf("%s: oversized result: %v %.300q", s.Name(), isErr, out)
		}
		if !strings.Contains(s.Problem(), "over 16 MB") {
			t.Fatalf("%s: problem %q", s.Name(), s.Problem())
		}
	}
}

func TestConnect_MissingCommandAndHTTP(t *testing.T) {
	if _, err := Connect(context.Background(), "gone", config.MCPServer{Command: "alisio-no-such-mcp"}, t.TempDir()); err == nil || !strings.Contains(err.Error(), `command "alisio-no-such-mcp" not found`) {
		t.Fatalf("missing command: %v", err)
	}
	if out, isErr := httpServer(t).Call(context.Background(), "web__echo", `{"text":"over http"}`); isErr || out != "over http" {
		t.Fatalf("%q %v", out, isErr)
	}
}

// httpServer connects, as "web", to an SDK server with addTools' tools over streamable HTTP.
func httpServer(t *testing.T) *Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "http"}, nil)
	addTools(srv)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	s, err := Connect(context.Background(), "web", config.MCPServer{URL: hs.URL}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// npmServer is the path of an MCP server installed from npm in test/mcp (by .ci/run and scripts/test.sh).
func npmServer(t *testing.T, bin string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "test", "mcp", "node_modules", ".bin", bin))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed: run (cd test/mcp && npm ci)", bin)
	}
	return p
}

// TestRealServers runs the reference servers from npm: filesystem (reads a file of the workspace it is
// given) and everything (text and non-text content).
func TestRealServers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the parser is fine"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := Connect(context.Background(), "fs", config.MCPServer{Command: npmServer(t, "mcp-server-filesystem"), Args: []string{dir}}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var read string
	for _, sp := range fs.Specs() {
		if sp.Name == "fs__read_text_file" || sp.Name == "fs__read_file" && read == "" {
			read = sp.Name
		}
	}
	if read == "" || len(fs.Specs()) < 5 {
		t.Fatalf("filesystem tools: %v", fs.Specs())
	}
	if out, isErr := fs.Call(context.Background(), read, `{"path":"`+filepath.Join(dir, "notes.txt")+`"}`); isErr || !strings.Contains(out, "the parser is fine") {
		t.Fatalf("%s: %q %v", read, out, isErr)
	}
	if out, isErr := fs.Call(context.Background(), read, `{"path":"/etc/passwd"}`); !isErr {
		t.Fatalf("the filesystem server read outside its directory: %q", out)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	everything, err := Connect(context.Background(), "every", config.MCPServer{Command: npmServer(t, "mcp-server-everything")}, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer everything.Close()
	tools := map[string]bool{}
	for _, sp := range everything.Specs() {
		tools[sp.Name] = true
	}
	if !tools["every__echo"] {
		t.Fatalf("everything's tools: %v", tools)
	}
	if out, isErr := everything.Call(context.Background(), "every__echo", `{"message":"hello"}`); isErr || !strings.Contains(out, "hello") {
		t.Fatalf("echo: %q %v", out, isErr)
	}
	if tools["every__get-env"] {
		if out, _ := everything.Call(context.Background(), "every__get-env", `{}`); strings.Contains(out, "sk-test-secret") || !strings.Contains(out, "PATH") {
			t.Fatalf("the server's environment must hold PATH and no API key: %q", out)
		}
	}
	for name := range tools {
		if strings.Contains(strings.ToLower(name), "image") {
			if out, _ := everything.Call(context.Background(), name, `{}`); !strings.Contains(out, "[image image/png") {
				t.Fatalf("%s: %q", name, out)
			}
		}
	}
}
