package server

import "sync"

// peers are the connections of this process (the windows of the shared daemon): a change one of them makes to
// a session reaches the meter of every other window that shows it.
var peers = struct {
	sync.Mutex
	m map[*Server]bool
}{m: map[*Server]bool{}}

func (s *Server) join() {
	peers.Lock()
	peers.m[s] = true
	peers.Unlock()
}

func (s *Server) leave() {
	peers.Lock()
	delete(peers.m, s)
	peers.Unlock()
}

// changed sends the meter of session to this window, and to the other windows on the same store that show it.
func (s *Server) changed(session string) {
	s.status.touch(session)
	s.mu.Lock()
	st := s.store
	s.mu.Unlock()
	if st == nil {
		return
	}
	peers.Lock()
	others := make([]*Server, 0, len(peers.m))
	for p := range peers.m {
		if p != s {
			others = append(others, p)
		}
	}
	peers.Unlock()
	for _, p := range others {
		p.mu.Lock()
		same := p.store == st
		p.mu.Unlock()
		if same {
			p.status.touchKnown(session)
		}
	}
}
