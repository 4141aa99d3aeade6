//go:build !linux

package osproc

import "os"

// DataSync flushes f's data to the disk (fsync; fdatasync is Linux's).
func DataSync(f *os.File) error { return f.Sync() }
