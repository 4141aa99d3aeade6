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

// OpenDataDir creates dataDir private to the user (mode 0700, tightened if it was wider) and opens the
// session store inside it.
func OpenDataDir(dataDir string, opts Options) (*Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data directory %s: %w", dataDir, err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("making data directory %s private: %w", dataDir, err)
	}
	opts.Dir = filepath.Join(dataDir, "sessions")
	return Open(opts)
}
