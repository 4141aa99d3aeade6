// Package testwait waits, in tests, for something another goroutine or process does: it polls a condition
// until it holds or a deadline passes. It replaces the wait loops each test used to write out.
package testwait

import (
	"testing"
	"time"
)

// poll is how often a condition is tried again.
const poll = 20 * time.Millisecond

// Until polls cond until it holds (true) or timeout passes (false); the caller then cleans up and fails.
func Until(timeout time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(poll) {
		if time.Now().After(deadline) {
			return cond()
		}
	}
	return true
}

// For polls cond until it holds, and fails t, naming what it waited for, when timeout passes first.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Until(timeout, cond) {
		t.Fatalf("waited %v for %s", timeout, what)
	}
}
