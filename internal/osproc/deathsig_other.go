//go:build !linux

package osproc

import "os/exec"

// DieWithParent has the system kill cmd when the thread that started it ends (the daemon dying, by any
// signal). Elsewhere than Linux this does nothing: the commands that need it also watch a pipe to the daemon.
func DieWithParent(*exec.Cmd) {}
