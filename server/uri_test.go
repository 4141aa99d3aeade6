package server

import (
	"path/filepath"
	"runtime"
	"testing"

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
}
