package server

import (
	"path/filepath"
	"runtime"
	"testing"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// TestURIPath: the editor's file:// URIs become paths of this system, Windows drive letters included, and a
// path survives the round trip through the URI an editor would send.
func TestURIPath(t *testing.T) {
	dir := t.TempDir()
	if got := uriPath(string(uri.File(dir))); got != dir {
		t.Errorf("uriPath(uri.File(%s)) = %s", dir, got)
	}
	if runtime.GOOS == "windows" {
		if got := uriPath("file:///c%3A/src/my%20app"); got != `C:\src\my app` {
			t.Errorf("drive letter: %s", got)
		}
	} else if got := uriPath("file:///src/my%20app"); got != filepath.FromSlash("/src/my app") {
		t.Errorf("escaped path: %s", got)
	}
	if got := uriPath("untitled:Untitled-1"); got != "" {
		t.Errorf("a non-file URI: %q", got)
	}
	if got := uriPath("file://"); got != "" {
		t.Errorf("a file URI without a path: %q", got)
	}
	// A relative one (Neovim once sent file://. from its chat window) is no workspace: the daemon would take its
	// own directory (/ for a daemon started from there) and the tools could act anywhere in it.
	for _, rel := range []string{"file://.", "file://src", "file:./src"} {
		if got := uriPath(rel); got != "" {
			t.Errorf("a relative file URI %q: %q", rel, got)
		}
	}
	if got := workspaceRoot(initializeParams{RootURI: "file://.", RootPath: ".", WorkspaceFolders: []protocol.WorkspaceFolder{{URI: "file://.", Name: "."}}}); got != "" {
		t.Errorf("the workspace of an editor that named only \".\": %q", got)
	}
}
