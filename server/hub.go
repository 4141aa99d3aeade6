package server

import (
	"sync"
	"sync/atomic"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
)

// Hub is what the connections of one daemon share — the windows of the shared daemon, or the one connection
// of a private daemon: the connections themselves (a change one makes reaches the others' meters), each
// folder's relevant files and watcher, the progress tokens, the limit on large requests, and the agents'
// turn locks and known windows. Serve makes one per connection when Options.Hub is nil.
type Hub struct {
	// peersMu guards peers, the connections being served.
	peersMu sync.Mutex
	peers   map[*Server]bool
	// workspacesMu guards workspaces, the shared state of each open folder by root (workspaces.go).
	workspacesMu sync.Mutex
	workspaces   map[string]*workspace
	// progressSeq numbers the progress tokens the daemon creates.
	progressSeq atomic.Int64
	// large bounds the large requests handled at once.
	large *LargeRequests
	// agents is what every connection's agent shares.
	agents *agent.Shared
}

// NewHub returns a hub whose large requests may take maxFrame bytes twice over at once (0: DefaultMaxFrame).
func NewHub(maxFrame int64) *Hub {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &Hub{peers: map[*Server]bool{}, workspaces: map[string]*workspace{}, large: NewLargeRequests(2 * maxFrame), agents: agent.NewShared()}
}

func (h *Hub) join(s *Server) {
	h.peersMu.Lock()
	h.peers[s] = true
	h.peersMu.Unlock()
}

func (h *Hub) leave(s *Server) {
	h.peersMu.Lock()
	delete(h.peers, s)
	h.peersMu.Unlock()
}

// StoreChanged tells every connection that the store changed outside them — a command of the CLI run by the
// shared daemon (a compaction, an undo, an edited checkpoint): each sends the meters of the sessions it shows
// again, so that an editor or a terminal chat does not show the session as it was.
func (h *Hub) StoreChanged() {
	h.peersMu.Lock()
	defer h.peersMu.Unlock()
	for p := range h.peers {
		p.status.touchAllElsewhere()
	}
}

// others are the connections besides s.
func (h *Hub) others(s *Server) []*Server {
	h.peersMu.Lock()
	defer h.peersMu.Unlock()
	out := make([]*Server, 0, len(h.peers))
	for p := range h.peers {
		if p != s {
			out = append(out, p)
		}
	}
	return out
}

// joinWorkspace returns the shared state of root, counting one more connection on it.
func (h *Hub) joinWorkspace(root string) *workspace {
	h.workspacesMu.Lock()
	defer h.workspacesMu.Unlock()
	ws := h.workspaces[root]
	if ws == nil {
		ws = &workspace{hub: h, root: root, files: relevantfiles.NewTracker()}
		h.workspaces[root] = ws
	}
	ws.mu.Lock()
	ws.refs++
	ws.mu.Unlock()
	return ws
}

// changed sends the meter of session to this window, and to the other windows on the same store that show it.
func (s *Server) changed(session string) {
	s.status.touch(session)
	st := s.currentStore()
	if st == nil {
		return
	}
	for _, p := range s.hub.others(s) {
		if p.currentStore() == st {
			p.status.touchKnown(session)
		}
	}
}
