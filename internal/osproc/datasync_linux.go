package osproc

import (
	"os"

	"golang.org/x/sys/unix"
)

// DataSync flushes f's data to the disk (fdatasync: the file's metadata only when its size changed).
func DataSync(f *os.File) error { return unix.Fdatasync(int(f.Fd())) }
