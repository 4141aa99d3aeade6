package server

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// largeRequest is the size of request parameters from which a request counts against a LargeRequests limit.
const largeRequest = 1 << 20

// LargeRequests bounds the bytes of large requests (a pasted log, a huge prompt) handled at once, so that
// several of them arriving together take memory for a few at a time rather than for all: a large request
// waits, cancellable, until the ones before it are answered. Small requests never wait. One LargeRequests
// is shared by every connection of a daemon.
type LargeRequests struct {
	budget int64
	sem    *semaphore.Weighted
}

// NewLargeRequests allows budget bytes of large request parameters at once (a larger request alone is
// allowed, on its own).
func NewLargeRequests(budget int64) *LargeRequests {
	return &LargeRequests{budget: budget, sem: semaphore.NewWeighted(budget)}
}

// enter waits until a request whose parameters are size bytes may run; leave ends it.
func (l *LargeRequests) enter(ctx context.Context, size int) (leave func(), err error) {
	if size < largeRequest {
		return func() {}, nil
	}
	weight := min(int64(size), l.budget)
	if err := l.sem.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	return func() { l.sem.Release(weight) }, nil
}
