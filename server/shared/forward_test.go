package shared

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"github.com/alisio-lsp/alisio-lsp/server"
	"go.uber.org/zap"
)

// lspOwner runs an owner in this process whose LSP side records the methods it receives and answers
// initialize; stop ends it as a crash would (its connections are cut).
type lspOwner struct {
	mu      sync.Mutex
	methods []string
	stop    context.CancelFunc
	done    chan struct{} // closed when its Run returned (its socket removed)
}

func startLSPOwner(t *testing.T, dataDir string) *lspOwner {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := &lspOwner{stop: cancel, done: make(chan struct{})}
	owner := &Owner{DataDir: dataDir, Version: "test", Log: zap.NewNop(),
		ServeLSP: func(ctx context.Context, conn io.ReadWriteCloser) {
			go func() { <-ctx.Done(); conn.Close() }()
			r := server.NewFrameReader(conn, io.Discard, 0)
			for {
				body, err := r.Next()
				if err != nil {
					return
				}
				m := peek(body)
				o.mu.Lock()
				o.methods = append(o.methods, m.Method+" "+string(m.Params))
				o.mu.Unlock()
				if m.isRequest() {
					_ = server.WriteFrame(conn, []byte(`{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{}}`))
				}
			}
		}}
	go func() {
		defer close(o.done)
		_ = owner.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-o.done })
	return o
}

func (o *lspOwner) received() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.methods...)
}

func frame(body string) string {
	return "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// TestForwarder_ReplaysOnlyTheLastSettings: an editor that changed its settings 300 times gets, after its
// daemon died, initialize, initialized and its last settings replayed to the new one — not all 300 (the
// forwarder used to keep every change).
func TestForwarder_ReplaysOnlyTheLastSettings(t *testing.T) {
	needUnixSockets(t)
	dataDir := t.TempDir()
	var owners []*lspOwner
	var mu sync.Mutex
	f := &Forwarder{Version: "test", Log: zap.NewNop(),
		DataDir: func(json.RawMessage) (string, error) { return dataDir, nil },
		StartOwner: func(dir string) (<-chan error, error) {
			mu.Lock()
			defer mu.Unlock()
			// As the owner lock does between processes: a new owner starts once the last one is gone (its
			// removal of its socket must not remove the new one's).
			if n := len(owners); n > 0 {
				<-owners[n-1].done
			}
			owners = append(owners, startLSPOwner(t, dir))
			return nil, nil
		}}
	editorIn, toForwarder := io.Pipe()
	fromForwarder, editorOut := io.Pipe()
	go func() { _, _ = io.Copy(io.Discard, fromForwarder) }()
	code := make(chan int, 1)
	go func() {
		code <- f.Run(context.Background(), editorIn, editorOut)
		editorIn.Close() // a forwarder that stopped fails the test's next send instead of blocking it
	}()
	send := func(body string) {
		if _, err := io.WriteString(toForwarder, frame(body)); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	for i := range 300 {
		send(`{"jsonrpc":"2.0","method":"workspace/didChangeConfiguration","params":{"n":` + strconv.Itoa(i) + `}}`)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"alisio/status","params":{}}`)
	testwait.For(t, time.Minute, "the first daemon to receive every message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(owners) == 1 && len(owners[0].received()) == 303
	})
	mu.Lock()
	owners[0].stop()
	mu.Unlock()
	testwait.For(t, time.Minute, "a second daemon", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(owners) >= 2 && len(owners[len(owners)-1].received()) == 3
	})
	mu.Lock()
	got := owners[len(owners)-1].received()
	mu.Unlock()
	if !strings.HasPrefix(got[0], "initialize ") || !strings.HasPrefix(got[1], "initialized ") || got[2] != `workspace/didChangeConfiguration {"n":299}` {
		t.Fatalf("replayed to the new daemon: %q", got)
	}
	send(`{"jsonrpc":"2.0","method":"exit"}`)
	if c := <-code; c != 1 {
		t.Fatalf("exit without shutdown: %d", c)
	}
}

// TestForwarder_ADaemonThatDiesWhileStartingIsReportedAtOnce: when the daemon the forwarder started exits with
// an error before it listens, the editor is told at once why, instead of after the whole connect timeout.
func TestForwarder_ADaemonThatDiesWhileStartingIsReportedAtOnce(t *testing.T) {
	dataDir := t.TempDir()
	f := &Forwarder{Version: "test", Log: zap.NewNop(), ConnectTimeout: time.Hour, dataDir: dataDir,
		StartOwner: func(string) (<-chan error, error) {
			exited := make(chan error, 1)
			exited <- errors.New("exit status 1")
			return exited, nil
		}}
	done := make(chan error, 1)
	go func() { done <- f.connect(context.Background()) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped while starting (exit status 1)") || !strings.Contains(err.Error(), "daemon.log") {
			t.Fatalf("connect: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the forwarder kept waiting for a daemon that had exited")
	}
}
