package main_test

import (
	"os"
	"syscall"
)

// peakRSSMB is the peak resident memory of an ended process, in MiB.
func peakRSSMB(ps *os.ProcessState) float64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	return 0
}
