// Package osproc holds what alisio asks of the operating system about processes and files, one small file per
// OS: process groups (so a command's descendants die with it), detaching the shared daemon, exclusive file
// locks, and free disk space. Callers stay free of build tags.
package osproc

import "os"

// executablePath is this program's file, or how it was started when the system cannot say.
func executablePath() string {
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}
