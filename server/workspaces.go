package server

import (
	"sync"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
)

// workspace is what the connections of one process on the same folder share (the windows of the shared
// daemon): the relevant-files tracker and one file watcher, closed when the last connection leaves.
type workspace struct {
	hub   *Hub
	root  string
	files *relevantfiles.Tracker

	mu      sync.Mutex
	refs    int
	started bool
	closed  bool
	watcher *relevantfiles.Watcher
	err     error
}

// leave counts one connection less; the last one closes the watcher.
func (ws *workspace) leave() {
	ws.hub.workspacesMu.Lock()
	ws.mu.Lock()
	ws.refs--
	last := ws.refs == 0
	if last {
		delete(ws.hub.workspaces, ws.root)
		ws.closed = true
	}
	w := ws.watcher
	ws.mu.Unlock()
	ws.hub.workspacesMu.Unlock()
	if last && w != nil {
		_ = w.Close()
	}
}

// watch starts the folder's watcher for the first connection; later ones share it. It returns the error that
// limited the watcher (the caller then asks its editor to report file changes).
func (ws *workspace) watch(log *zap.Logger) error {
	ws.mu.Lock()
	if ws.started {
		err := ws.err
		ws.mu.Unlock()
		return err
	}
	ws.started = true
	ws.mu.Unlock()
	w, err := relevantfiles.Watch(ws.root, ws.files, relevantfiles.DefaultDebounce, log)
	ws.mu.Lock()
	ws.err = err
	closed := ws.closed
	if !closed {
		ws.watcher = w
	}
	ws.mu.Unlock()
	if closed && w != nil {
		_ = w.Close() // every connection left while it started
	}
	return err
}
