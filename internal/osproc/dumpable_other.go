//go:build unix && !linux

package osproc

// notDumpable: macOS keeps other processes out of this one's memory without being asked (task_for_pid needs
// privileges).
func notDumpable() {}
