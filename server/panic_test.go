package server

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/alisio-lsp/alisio-lsp/config"
)

// TestPanicBecomesAnErrorReply registers a handler that panics: the client gets an internal-error reply and
// the connection keeps serving.
func TestPanicBecomesAnErrorReply(t *testing.T) {
	methods["alisio/test-panic"] = func(*Server, context.Context, json.RawMessage) (any, error) { panic("boom") }
	defer delete(methods, "alisio/test-panic")
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Serve(ctx, a, Options{Config: config.Default(), DataDir: t.TempDir()}) }()
	client := jsonrpc2.NewConn(jsonrpc2.NewStream(b))
	client.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		go func() { _ = reply(ctx, nil, nil) }()
		return nil
	})
	call := func(method string, params any) error {
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := client.Call(c, method, params, nil)
		return err
	}
	if err := call("initialize", map[string]any{"capabilities": map[string]any{}}); err != nil {
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
	cancel()
	_ = client.Close()
	<-done
}
