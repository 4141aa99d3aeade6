//go:build unix

package osproc

import (
	"os"
	"path/filepath"
)

// UserDataDir is where per-user application data lives when XDG_DATA_HOME is not set: Linux ~/.local/share,
// macOS ~/Library/Application Support.
func UserDataDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, dataDirInHome), nil
}

// RuntimeDir is a directory private to the user for sockets ($XDG_RUNTIME_DIR, rarely set on macOS), or ""
// when there is none.
func RuntimeDir() string { return os.Getenv("XDG_RUNTIME_DIR") }
