package server

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// drainingServer is the part of a Server that goBackground, drain and handle use.
func drainingServer(t *testing.T) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &Server{connCtx: ctx, inflight: map[string]context.CancelFunc{}, exit: make(chan int, 1),
		status: newStatusSender(ctx, time.Hour, func(string, bool) {})}
}

// TestRequestAfterDrainIsRefused: a request the connection still reads after the daemon began to stop (an
// editor's status poll that crossed the exit) is answered at once that it was not run, and nothing starts
// that drain would not wait for. CI's race detector caught such a request's goroutine being counted while
// drain was already waiting.
func TestRequestAfterDrainIsRefused(t *testing.T) {
	s := drainingServer(t)
	s.drain()
	call, err := jsonrpc2.NewCall(jsonrpc2.NewNumberID(7), "alisio/status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var replied error
	answered := false
	reply := func(_ context.Context, _ any, err error) error {
		answered, replied = true, err
		return nil
	}
	if err := s.handle(context.Background(), reply, call); err != nil {
		t.Fatal(err)
	}
	if !answered || !errors.Is(replied, errStopping) {
		t.Fatalf("a request after drain was answered %v (answered: %v), want %v", replied, answered, errStopping)
	}
	if len(s.inflight) != 0 {
		t.Fatalf("the refused request is still listed as running: %v", s.inflight)
	}
	if s.goBackground(func() { t.Error("background work ran after drain") }) {
		t.Fatal("goBackground accepted work after drain")
	}
}

// TestDrainWhileWorkStarts starts background work from many goroutines while drain runs: every piece
// accepted has finished when drain returns, and the race detector sees every count ordered before the wait.
func TestDrainWhileWorkStarts(t *testing.T) {
	for round := 0; round < 50; round++ {
		s := drainingServer(t)
		var mu sync.Mutex
		accepted, finished := 0, 0
		var starters sync.WaitGroup
		for range 8 {
			starters.Add(1)
			go func() {
				defer starters.Done()
				for range 20 {
					ok := s.goBackground(func() {
						mu.Lock()
						finished++
						mu.Unlock()
					})
					if ok {
						mu.Lock()
						accepted++
						mu.Unlock()
					}
				}
			}()
		}
		s.drain()
		mu.Lock()
		atDrain := finished
		mu.Unlock()
		starters.Wait()
		mu.Lock()
		if finished != atDrain || finished != accepted {
			t.Fatalf("round %d: %d pieces accepted, %d finished by drain, %d in all", round, accepted, atDrain, finished)
		}
		mu.Unlock()
	}
}
