package osproc

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper makes the calling process adopt its orphaned descendants (PR_SET_CHILD_SUBREAPER): a
// process that detaches with setsid, nohup or a double fork stays below it, where Descendants finds it. It
// reports whether the system allowed it.
func BecomeSubreaper() bool { return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == nil }

// Descendants lists the live processes below pid (zombies left out), read from /proc.
func Descendants(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // it ended meanwhile
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses, so fields are read after its last ')'.
		end := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[end+1:]))
		if end < 0 || len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		if parent, err := strconv.Atoi(fields[1]); err == nil {
			children[parent] = append(children[parent], child)
		}
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// Executable is the path that starts this program again: /proc/self/exe, valid even when the file was
// replaced or removed since (an upgrade while the daemon runs), or the executable's path where /proc is not
// mounted.
func Executable() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	return executablePath()
}
