package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/alisio-lsp/alisio-lsp/config"
)

// TestPanicBecomesAnErrorReply registers a handler that panics: the client gets an internal-error reply and
// the connection keeps serving.
func TestPanicBecomesAnErrorReply(t *testing.T) {
	methods["alisio/test-panic"] = func(*Server, context.Context, json.RawMessage) (any, error) { panic("boom") }
	defer delete(methods, "alisio/test-panic")
	call := pipeClient(t)
	if err := call("initialize", map[string]any{"rootUri": string(uri.File(t.TempDir())), "capabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	err := call("alisio/test-panic", nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Code != jsonrpc2.InternalError {
		t.Fatalf("a panicking handler answered %v", err)
	}
	if err := call("alisio/sessions", nil); err != nil {
		t.Fatalf("the connection did not survive the panic: %v", err)
	}
}

// TestNoWorkspace: an editor that names no folder (an empty VS Code window) gets a daemon whose agent does
// nothing, with an answer that says to open a folder; it never works in the directory the daemon started in.
func TestNoWorkspace(t *testing.T) {
	call := pipeClient(t)
	if err := call("initialize", map[string]any{"rootUri": nil, "workspaceFolders": nil, "capabilities": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		method string
		params any
	}{{"alisio/prompt", map[string]any{"text": "list the files"}}, {"alisio/status", nil}, {"alisio/sessions", nil}} {
		err := call(m.method, m.params)
		if err == nil || !strings.Contains(err.Error(), "no workspace folder is open: open your project's folder (File > Open Folder… in VS Code") {
			t.Fatalf("%s without a workspace: %v", m.method, err)
		}
	}
}

// pipeClient serves a daemon on an in-memory pipe for the test and returns a function that calls it; the
// daemon stops when the test ends.
func pipeClient(t *testing.T) func(method string, params any) error {
	data := t.TempDir() // before the cleanup below, so removed after the daemon stopped
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Serve(ctx, a, Options{Config: config.Default(), DataDir: data}) }()
	client := jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	client.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		go func() { _ = reply(ctx, nil, nil) }()
		return nil
	})
	t.Cleanup(func() {
		cancel()
		_ = client.Close()
		<-done
	})
	return func(method string, params any) error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := client.Call(c, method, params, nil)
		return err
	}
}
