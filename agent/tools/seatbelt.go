//go:build unix

package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writableDirs are where a confined command may write: the workspace, the temporary directory and the user's
// cache directory (build caches such as Go's).
func writableDirs(workspace string) []string {
	dirs := []string{workspace}
	cache, _ := os.UserCacheDir()
	for _, d := range []string{os.TempDir(), cache} {
		if d != "" && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// seatbeltProfile is the macOS sandbox profile for commands: everything allowed but writing to the file
// system, which is allowed only beneath the WRITABLE_n parameters and in the device files commands write to.
// Reads, the network and processes stay unconfined, as with Landlock on Linux.
// With a DAEMON_SOCKET parameter, connecting to that Unix socket (the shared daemon's) is denied.
func seatbeltProfile(n int, daemonSocket bool) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n(deny file-write*)\n(allow file-write*\n")
	for i := range n {
		fmt.Fprintf(&b, "  (subpath (param \"WRITABLE_%d\"))\n", i)
	}
	b.WriteString("  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/tty\") (regex #\"^/dev/fd/\"))\n")
	if daemonSocket {
		b.WriteString("(deny network-outbound (remote unix-socket (path-literal (param \"DAEMON_SOCKET\"))))\n")
	}
	return b.String()
}

// seatbeltArgv is the sandbox-exec command line that confines what follows it to writing in writable. The
// sandbox compares real paths (/tmp is /private/tmp on macOS), so each directory's symlinks are resolved.
func seatbeltArgv(sandboxExec string, writable []string, daemonSocket string) []string {
	argv := []string{sandboxExec, "-p", seatbeltProfile(len(writable), daemonSocket != "")}
	for i, d := range writable {
		argv = append(argv, "-D", fmt.Sprintf("WRITABLE_%d=%s", i, realPath(d)))
	}
	if daemonSocket != "" {
		argv = append(argv, "-D", "DAEMON_SOCKET="+filepath.Join(realPath(filepath.Dir(daemonSocket)), filepath.Base(daemonSocket)))
	}
	return argv
}

// realPath is p with its symlinks resolved, or p where it cannot be.
func realPath(p string) string {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return p
}
