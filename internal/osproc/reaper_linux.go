package osproc

import (
	"fmt"
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
		state, parent, err := procStat(child)
		if err != nil || state == "Z" {
			continue // it ended meanwhile, or is a zombie
		}
		children[parent] = append(children[parent], child)
	}
	var out []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		out = append(out, queue[0])
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// procStat reads the state and the parent of pid from /proc/PID/stat ("pid (comm) state ppid …": comm may
// hold spaces and parentheses, so the fields are read after its last ')').
func procStat(pid int) (state string, parent int, err error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, err
	}
	end := strings.LastIndexByte(string(stat), ')')
	if end < 0 {
		return "", 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	fields := strings.Fields(string(stat[end+1:]))
	if len(fields) < 2 {
		return "", 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	parent, err = strconv.Atoi(fields[1])
	return fields[0], parent, err
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
