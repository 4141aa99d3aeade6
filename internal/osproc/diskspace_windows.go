package osproc

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// FreeBytes is the space the user may still use on the volume holding dir (GetDiskFreeSpaceEx, which
// honours disk quotas).
func FreeBytes(dir string) (uint64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	var free, total, totalFree uint64
	if err := windows.GetDiskFreeSpaceEx(p, &free, &total, &totalFree); err != nil {
		return 0, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	return free, nil
}

// FreeBytesOf is FreeBytes for the volume holding the open file or directory f.
func FreeBytesOf(f *os.File) (uint64, error) { return FreeBytes(f.Name()) }
