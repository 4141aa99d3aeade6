//go:build unix

package osproc

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop a command run from a terminal: Ctrl-C, a kill, and the terminal
// closing (SIGHUP), each of which must leave the same record (a running tool call cancelled, not uncertain).
func StopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP} }
