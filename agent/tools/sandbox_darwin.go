package tools

import (
	"errors"
	"os"
	"strings"
)

// sandboxExec is macOS's sandbox command (Seatbelt), the one OpenAI's Codex CLI confines commands with.
const sandboxExec = "/usr/bin/sandbox-exec"

// sandboxPrefix runs commands under sandbox-exec with a profile that allows writes only in writable.
func sandboxPrefix(writable []string, daemonSocket string) []string {
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil
	}
	return seatbeltArgv(sandboxExec, writable, daemonSocket)
}

// confineThread: on macOS the confinement is sandbox-exec around the command, not the thread.
func confineThread(*os.File, []string) error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return errors.New("no " + sandboxExec + " on this system")
	}
	return nil
}

// Confinement says what confines run_command on this system, for the user.
func Confinement(workspace string) string {
	if _, err := os.Stat(sandboxExec); err != nil {
		return "run_command is NOT confined: " + sandboxExec + " is missing; commands can write anywhere the user can; " + unconfined
	}
	return "run_command writes only in " + strings.Join(writableDirs(workspace), ", ") + " (sandbox-exec" + pathLimit + "); " + unconfined +
		"; the processes of its process group end with it (one that leaves the group with setsid does not)"
}

// scopeThread: macOS has no scope for signals; a command's process group is killed with it.
func scopeThread() error { return nil }
