package osproc

import (
	"os"
	"syscall"
)

// StopSignals are the signals that stop a command run from a console: Ctrl-C and a kill.
func StopSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }
