package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/storage"
)

// TestRemoteCommandNeverOpensTheFilesItNames: a command the shared daemon runs for a CLI writes its logs back
// to the CLI, never to the --log-file the request names (the daemon used to create that file wherever the
// request said, also for a sandboxed command), and cannot switch to another data directory.
func TestRemoteCommandNeverOpensTheFilesItNames(t *testing.T) {
	dataDir := t.TempDir()
	st, err := storage.OpenDataDir(dataDir, storage.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := func(args ...string) (code int, stdout, stderr, log string) {
		var out, errOut, logOut bytes.Buffer
		root, sub := newRootCommand(strings.NewReader(""), &out, &errOut)
		sub.store, sub.daemonDataDir, sub.cwd, sub.remoteLog = st, dataDir, t.TempDir(), &logOut
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			sub.fail(err)
			code = 1
		}
		return code, out.String(), errOut.String(), logOut.String()
	}
	outside := filepath.Join(t.TempDir(), "outside.log")
	if code, _, stderr, log := run("--log-file", outside, "--log-level", "debug", "--data-dir", dataDir, "sessions", "list"); code != 0 || log == "" {
		t.Fatalf("sessions list in the daemon: exit %d, stderr %q, log %q", code, stderr, log)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the daemon opened the --log-file of the request: %v", err)
	}
	other := t.TempDir()
	if code, _, stderr, _ := run("--data-dir", other, "sessions", "list"); code != 1 || !strings.Contains(stderr, "cannot run a command for the data directory "+other) {
		t.Fatalf("another data directory: exit %d, %q", code, stderr)
	}
}
