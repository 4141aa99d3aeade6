package agent

import (
	"sync"
	"testing"
)

// TestShared_TurnLocksAreCountedAndPruned: two agents' turns of one session run one after the other, a
// session's lock goes once nobody holds or waits for it (the process-wide map used to keep every session it
// ever saw), and sessions do not wait for each other.
func TestShared_TurnLocksAreCountedAndPruned(t *testing.T) {
	s := NewShared()
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := s.lockTurn(nil, "one")
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			mu.Lock()
			running--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Fatalf("%d turns of one session ran at once", most)
	}
	if n := s.heldTurns(); n != 0 {
		t.Fatalf("%d turn locks kept after every turn ended", n)
	}
	a := s.lockTurn(nil, "a")
	b := s.lockTurn(nil, "b") // another session: no wait
	if n := s.heldTurns(); n != 2 {
		t.Fatalf("%d turn locks held; want 2", n)
	}
	a()
	b()
	if n := s.heldTurns(); n != 0 {
		t.Fatalf("%d turn locks kept", n)
	}
}
