//go:build unix

package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeatbeltArgv: the macOS sandbox command line denies every write but beneath the writable directories
// (passed as parameters, their symlinks resolved as the sandbox compares real paths) and a few devices, and
// connecting to the shared daemon's socket.
func TestSeatbeltArgv(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	must(t, os.Symlink(real, link))
	argv := seatbeltArgv("/usr/bin/sandbox-exec", []string{link, "/nonexistent/cache"}, filepath.Join(link, "daemon.sock"))
	if argv[0] != "/usr/bin/sandbox-exec" || argv[1] != "-p" {
		t.Fatalf("argv = %q", argv)
	}
	profile := argv[2]
	for _, want := range []string{"(allow default)", "(deny file-write*)", `(subpath (param "WRITABLE_0"))`, `(subpath (param "WRITABLE_1"))`, `(literal "/dev/null")`,
		`(deny network-outbound (remote unix-socket (path-literal (param "DAEMON_SOCKET"))))`} {
		if !strings.Contains(profile, want) {
			t.Errorf("profile lacks %s:\n%s", want, profile)
		}
	}
	if strings.Contains(profile, "WRITABLE_2") {
		t.Errorf("profile names a third directory:\n%s", profile)
	}
	want := []string{"-D", "WRITABLE_0=" + mustReal(t, real), "-D", "WRITABLE_1=/nonexistent/cache", "-D", "DAEMON_SOCKET=" + filepath.Join(mustReal(t, real), "daemon.sock")}
	if got := argv[3:]; strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("parameters = %q, want %q", got, want)
	}
}

func mustReal(t *testing.T, p string) string {
	r, err := filepath.EvalSymlinks(p)
	must(t, err)
	return r
}
