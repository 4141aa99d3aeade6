package osproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// Group starts cmd in a process group of its own; with a cmd made by exec.CommandContext, cancelling its
// context kills it. (Windows has no kill of a whole group: run_command puts its commands in a Job Object.)
func Group(cmd *exec.Cmd) {
	procAttr(cmd).CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
}

// KillGroup kills the process pid (Windows has no process groups to signal).
func KillGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// Detach starts cmd without a console and in a process group of its own, so that it outlives the process
// that started it (the shared daemon).
func Detach(cmd *exec.Cmd) {
	procAttr(cmd).CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS
}

func procAttr(cmd *exec.Cmd) *syscall.SysProcAttr {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	return cmd.SysProcAttr
}

// LockFile takes an exclusive lock on f without waiting (LockFileEx); held reports that another process has
// it. The system releases the lock when the process dies, however it dies.
func LockFile(f *os.File) (held bool, err error) {
	ol := new(windows.Overlapped)
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return true, nil
	}
	return false, err
}

// PrivateUmask does nothing on Windows: files there take the ACL of their directory, and alisio's live under
// %LOCALAPPDATA%, which only the user can reach.
func PrivateUmask() (restore func()) { return func() {} }

// LinkCount is the number of hard links of the file f is open on.
func LinkCount(f *os.File) (uint64, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 0, err
	}
	return uint64(info.NumberOfLinks), nil
}

// Alive reports whether process pid exists and has not exited.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259 // STILL_ACTIVE
}

// ForeignOwner reports false: on Windows alisio's data and sockets live under %LOCALAPPDATA%, whose ACL only
// lets the user in.
func ForeignOwner(os.FileInfo) (uid int, foreign bool) { return 0, false }
