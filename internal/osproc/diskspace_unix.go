//go:build unix

package osproc

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FreeBytes is the space an unprivileged process may still use on the file system holding dir (statfs).
func FreeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// FreeBytesOf is FreeBytes for the file system holding the open file or directory f (fstatfs: no path to
// resolve, about half the cost of a statfs).
func FreeBytesOf(f *os.File) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Fstatfs(int(f.Fd()), &st); err != nil {
		return 0, fmt.Errorf("reading the free space of %s: %w", f.Name(), err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
