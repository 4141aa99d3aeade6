package storage

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// DataDir resolves the per-user data directory: override when set, else $XDG_DATA_HOME/alisio, else the
// system's place for it (Linux ~/.local/share/alisio, macOS ~/Library/Application Support/alisio, Windows
// %LOCALAPPDATA%\alisio).
func DataDir(override string) (string, error) {
	if override != "" {
		return filepath.Abs(override)
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "alisio"), nil
	}
	base, err := osproc.UserDataDir()
	if err != nil {
		return "", fmt.Errorf("finding the data directory (set --data-dir or XDG_DATA_HOME): %w", err)
	}
	return filepath.Join(base, "alisio"), nil
}

// OpenDataDir makes dataDir private to the user (see PrivateDir) and opens the session store inside it.
func OpenDataDir(dataDir string, opts Options) (*Store, error) {
	if err := PrivateDir(dataDir, "data directory"); err != nil {
		return nil, err
	}
	opts.Dir = filepath.Join(dataDir, "sessions")
	return Open(opts)
}

// PrivateDir creates dir (what names it for the user) or checks the one there: it must be a directory owned by
// the current user, and its mode is tightened to 0700. A directory of another user (say one made 0777 in a
// shared /tmp) is refused, never used.
func PrivateDir(dir, what string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the %s %s: %w", what, dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("checking the %s %s: %w", what, dir, err)
	}
	if uid, foreign := osproc.ForeignOwner(info); foreign {
		return fmt.Errorf("the %s %s belongs to another user (uid %d), so alisio will not use it: choose a directory of your own with --data-dir (or XDG_DATA_HOME)", what, dir, uid)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("making the %s %s private: %w", what, dir, err)
	}
	return nil
}
