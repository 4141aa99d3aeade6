package server

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"go.uber.org/zap"
)

// TestWorkspaces_SharedByConnectionsOnOneFolder: connections on one folder share its tracker and one watcher,
// which the last one to leave closes; another folder has its own.
func TestWorkspaces_SharedByConnectionsOnOneFolder(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	hub := NewHub(0)
	a, b, c := hub.joinWorkspace(root), hub.joinWorkspace(root), hub.joinWorkspace(other)
	if a != b || a == c || a.files != b.files {
		t.Fatal("connections on one folder must share its state, and only those")
	}
	if err := a.watch(zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	first := a.watcher
	if err := b.watch(zap.NewNop()); err != nil || b.watcher != first || first == nil {
		t.Fatal("the second connection started another watcher")
	}
	// A change seen by the one watcher reaches the shared tracker.
	if err := os.WriteFile(filepath.Join(root, "new.go"), []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 5*time.Second, "the shared watcher to report the change", func() bool { return len(b.files.ChangedSince(time.Time{})) > 0 })
	a.leave()
	if hub.joinWorkspace(root) != b {
		t.Fatal("the folder's state went while a connection still uses it")
	}
	b.leave()
	b.leave()
	c.leave()
	if d := hub.joinWorkspace(root); d == a {
		t.Fatal("the last connection's leave must release the folder")
	} else {
		d.leave()
	}
}
