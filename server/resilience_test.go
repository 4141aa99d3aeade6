package server_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/storage/storagetest"
)

// TestShutdownDuringCompact: the daemon owns its store, a compaction is running and status notifications
// are due every millisecond when the client shuts down and exits. The status sender and every
// request goroutine are drained before the store closes: the process must not crash (it did, with SIGSEGV
// inside Badger, in 5 of 6 runs) and must exit with 0, every time.
func TestShutdownDuringCompact(t *testing.T) {
	for round := 0; round < 10; round++ {
		dataDir := t.TempDir()
		ws := t.TempDir()
		st, err := storage.OpenDataDir(dataDir, storage.DefaultOptions(""))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := st.CreateSession(storage.Session{Workspace: ws}, synthetic.Generate(synthetic.Default(400)))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		c := servertest.Start(t, server.Options{Config: config.Default(), DataDir: dataDir, StatusInterval: time.Millisecond})
		if _, err := c.Initialize(ctx(t), ws, nil, true, false); err != nil {
			t.Fatal(err)
		}
		// A compaction still running, and status reads, racing with the exit.
		go func() {
			_ = c.Call(ctx(t), "alisio/compact", map[string]any{"session": sess.ID, "focus": "the parser"}, nil)
		}()
		go func() { _ = c.Call(ctx(t), "alisio/status", map[string]any{"session": sess.ID}, nil) }()
		time.Sleep(time.Duration(round) * time.Millisecond)
		if err := c.Call(ctx(t), "shutdown", nil, nil); err != nil {
			t.Fatal(err)
		}
		_ = c.Notify("exit", nil)
		select {
		case code := <-c.ExitCode:
			if code != 0 {
				t.Fatalf("round %d: exit code %d", round, code)
			}
			c.ExitCode <- code // for the cleanup
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the daemon did not exit", round)
		}
		// The store was closed cleanly: it opens again at once.
		st, err = storage.OpenDataDir(dataDir, storage.DefaultOptions(""))
		if err != nil {
			t.Fatalf("round %d: reopening: %v", round, err)
		}
		_ = st.Close()
	}
}

// TestDiskFullKeepsTheDaemonAlive: when the disk fills under a running daemon, a request that writes gets one
// clear error and the daemon goes on answering.
func TestDiskFullKeepsTheDaemonAlive(t *testing.T) {
	disk := storagetest.SmallDisk(t, "160m")
	c := servertest.Start(t, server.Options{Config: config.Default(), DataDir: filepath.Join(disk, "data")})
	ws := t.TempDir()
	if _, err := c.Initialize(ctx(t), ws, nil, false, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx(t), "alisio/sessions", nil, nil); err != nil {
		t.Fatal(err)
	}
	storagetest.Fill(t, disk, 1<<20)
	err := c.Call(ctx(t), "alisio/newSession", map[string]any{"title": "t"}, nil)
	if err == nil || !strings.Contains(err.Error(), "free some disk space") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a write on a full disk: %v", err)
	}
	if err := c.Call(ctx(t), "alisio/sessions", nil, nil); err != nil {
		t.Fatalf("the daemon stopped answering after a full disk: %v", err)
	}
}
