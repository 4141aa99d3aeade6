package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestSoftMemoryLimit: the limit holds until restored, and a GOMEMLIMIT the user set is left alone.
func TestSoftMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	restore := softMemoryLimit(importMemoryLimit)
	if got := debug.SetMemoryLimit(-1); got != importMemoryLimit {
		t.Fatalf("limit during the import = %d, want %d", got, importMemoryLimit)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("limit after the import = %d, want %d as before", got, before)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	prev := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(prev)
	restore = softMemoryLimit(importMemoryLimit)
	defer restore()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set the limit became %d", got)
	}
}
