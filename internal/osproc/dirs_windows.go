package osproc

import (
	"errors"
	"os"
	"path/filepath"
)

// UserDataDir is where per-user application data lives when XDG_DATA_HOME is not set: %LOCALAPPDATA%.
func UserDataDir() (string, error) {
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return d, nil
	}
	return "", errors.New("%LOCALAPPDATA% is not set")
}

// RuntimeDir is a directory private to the user for sockets: %LOCALAPPDATA%\alisio\run (its ACL lets only
// the user in), or "" when %LOCALAPPDATA% is not set.
func RuntimeDir() string {
	d, err := UserDataDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "alisio", "run")
}
