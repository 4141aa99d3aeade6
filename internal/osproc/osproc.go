// Package osproc holds what alisio asks of the operating system about processes and files, one small file per
// OS: process groups (so a command's descendants die with it), detaching the shared daemon, exclusive file
// locks, and free disk space. Callers stay free of build tags.
package osproc

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// executablePath is this program's file, or how it was started when the system cannot say.
func executablePath() string {
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}

// WrapperArg is the first argument of a command wrapper: the program started again to run one command of the
// agent (see agent/tools). Whatever runs below a process started with it is the agent's.
const WrapperArg = "alisio-command"

// DaemonSocket is where the shared daemon of dataDir listens: in the user's private runtime directory when there
// is one ($XDG_RUNTIME_DIR; on Windows %LOCALAPPDATA%\alisio\run), else in dataDir (which is 0700). Unix
// socket paths are short, so the runtime name is a hash of the data directory.
func DaemonSocket(dataDir string) string {
	if rt := RuntimeDir(); rt != "" {
		sum := sha256.Sum256([]byte(dataDir))
		return filepath.Join(rt, "alisio-"+hex.EncodeToString(sum[:8])+".sock")
	}
	return filepath.Join(dataDir, "daemon.sock")
}
