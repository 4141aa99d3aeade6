//go:build !linux

package osproc

// BecomeSubreaper reports false: only Linux lets a process adopt its orphaned descendants.
func BecomeSubreaper() bool { return false }

// Descendants finds nothing where the system gives no process tree to read (only Linux's /proc is read).
func Descendants(int) []int { return nil }

// Executable is the path that starts this program again.
func Executable() string { return executablePath() }
