package osproc

import "golang.org/x/sys/unix"

// notDumpable keeps other processes of the user (the agent's commands among them) from reading this
// process's memory through /proc/PID/mem or ptrace; only a process with CAP_SYS_PTRACE still can.
func notDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
