//go:build unix

package osproc

import (
	"fmt"

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
