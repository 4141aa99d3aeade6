package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestLargeRequests_WaitForRoom: small requests never wait; large ones run together while their bytes fit the
// budget, and the next waits (cancellable) until one leaves; one larger than the budget runs alone.
func TestLargeRequests_WaitForRoom(t *testing.T) {
	l := NewLargeRequests(5 << 20)
	waits := func(size int) bool {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		leave, err := l.enter(ctx, size)
		if err == nil {
			leave()
			return false
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("enter: %v", err)
		}
		return true
	}
	first, err := l.enter(context.Background(), 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	if waits(2 << 20) {
		t.Fatal("a second large request that fits the budget waited")
	}
	if !waits(3 << 20) {
		t.Fatal("a large request past the budget ran beside the first")
	}
	for range 100 {
		if waits(largeRequest - 1) {
			t.Fatal("a small request waited")
		}
	}
	first()
	if waits(3 << 20) {
		t.Fatal("a large request still waited after the first left")
	}
	if waits(50 << 20) {
		t.Fatal("a request larger than the budget never runs")
	}
}
