//go:build unix

package osproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Group starts cmd as the leader of a process group of its own; with a cmd made by exec.CommandContext,
// cancelling its context kills the whole group, so that what the command started goes with it.
func Group(cmd *exec.Cmd) {
	procAttr(cmd).Setpgid = true
	if cmd.Cancel != nil {
		cmd.Cancel = func() error { return KillGroup(cmd.Process.Pid) }
	}
}

// KillGroup kills every process of the group led by pid. A group already gone is not an error.
func KillGroup(pid int) error {
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("killing process group %d: %w", pid, err)
	}
	return nil
}

// Detach starts cmd in a session of its own, so that it outlives the terminal and the process that started
// it (the shared daemon).
func Detach(cmd *exec.Cmd) { procAttr(cmd).Setsid = true }

func procAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}

// LockFile takes an exclusive lock on f without waiting; held reports that another process has it. The
// system releases the lock when the process dies, however it dies.
func LockFile(f *os.File) (held bool, err error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// PrivateUmask makes files created until restore is called private to the user (umask 077).
func PrivateUmask() (restore func()) {
	old := syscall.Umask(0o077)
	return func() { syscall.Umask(old) }
}

// LinkCount is the number of hard links of the file f is open on.
func LinkCount(f *os.File) (uint64, error) {
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink), nil
	}
	return 1, nil
}

// Alive reports whether process pid exists (a zombie counts as existing).
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// ForeignOwner reports the owner of info when it is not the current user (and whether it is not): alisio
// keeps its data and sockets only in places of the user's own.
func ForeignOwner(info os.FileInfo) (uid int, foreign bool) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return int(st.Uid), true
	}
	return 0, false
}
