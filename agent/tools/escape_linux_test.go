package tools

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// unprivilegedEnv marks a run of this test binary as the unprivileged user's (see alsoUnprivileged).
const unprivilegedEnv = "ALISIO_TEST_UNPRIVILEGED"

// alsoUnprivileged runs the calling test again as the unprivileged user nobody (uid 65534) when the tests run
// as root, so that each escape is tried by both: root's capabilities must not open a way out, and an ordinary
// user must be held too. The copy of the test binary and its temporary directory are the user's own.
func alsoUnprivileged(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 || os.Getenv(unprivilegedEnv) != "" {
		return
	}
	t.Run("unprivileged", func(t *testing.T) {
		dir, err := os.MkdirTemp("", "alisio-nobody-")
		must(t, err)
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		must(t, os.Chmod(dir, 0o755))
		bin := filepath.Join(dir, "tools.test")
		src, err := os.Open(os.Args[0])
		must(t, err)
		defer src.Close()
		dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
		must(t, err)
		_, err = io.Copy(dst, src)
		must(t, err)
		must(t, dst.Close())
		tmp := filepath.Join(dir, "tmp")
		must(t, os.Mkdir(tmp, 0o700))
		must(t, os.Chown(tmp, 65534, 65534))
		cmd := exec.Command(bin, "-test.run", "^"+strings.Split(t.Name(), "/")[0]+"$", "-test.v", "-test.count=1")
		cmd.Dir = tmp
		cmd.Env = []string{unprivilegedEnv + "=1", outsideEnv + "=" + outsideDir(t), "TMPDIR=" + tmp, "HOME=" + tmp, "PATH=" + os.Getenv("PATH")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("as uid 65534: %v\n%s", err, out)
		}
	})
}

// outsideEnv passes the unprivileged run the directory outside every writable one that root made for it.
const outsideEnv = "ALISIO_TEST_OUTSIDE"

// outsideDir is a directory anyone may write to, outside the workspace, the temporary and the cache
// directories (beside the package): a confined command must not be able to write there.
func outsideDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(outsideEnv); dir != "" {
		return dir
	}
	dir, err := os.MkdirTemp(".", "outside-")
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o777))
	abs, err := filepath.Abs(dir)
	must(t, err)
	return abs
}

// TestRunCommand_AWorkspaceSwappedForASymlinkConfinesNothingNew: a command that moves the workspace away and
// puts a symlink to / at its path gets no new place to write: the next command is refused, and the sandbox
// holds the directory opened at the start, not its path. The next command's Landlock rule used to follow the
// link and allow writes anywhere.
func TestRunCommand_AWorkspaceSwappedForASymlinkConfinesNothingNew(t *testing.T) {
	alsoUnprivileged(t)
	parent := t.TempDir() // writable for commands: the temporary directory
	ws := filepath.Join(parent, "proj")
	must(t, os.Mkdir(ws, 0o755))
	outside := outsideDir(t)
	s, err := New(ws, DefaultLimits())
	must(t, err)
	defer s.Close()
	if !strings.Contains(Confinement(ws), "Landlock") {
		t.Skip("Landlock is unavailable here: " + Confinement(ws))
	}
	s.RequireSandbox = true
	swap := "mv " + ws + " " + ws + ".real && ln -s " + outside + " " + ws + " && echo swapped"
	if out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(swap)+`}`); isErr || !strings.Contains(out, "swapped") {
		t.Fatalf("the swap: %s", out)
	}
	target := filepath.Join(outside, "escaped.txt")
	out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote("echo pwned > "+target)+`}`)
	if !isErr || !strings.Contains(out, "was moved or replaced") {
		t.Fatalf("a command after the swap: %v %s", isErr, out)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("a command wrote outside the workspace through the swapped path")
	}
	// Even when the path leads back to the folder, the rule is the opened folder's: put the folder back and
	// link the outside directory into it — writing through the link is refused.
	must(t, os.Remove(ws))
	must(t, os.Rename(ws+".real", ws))
	out, _ = s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote("ln -s "+outside+" out && echo pwned > out/escaped.txt; echo done")+`}`)
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("a command wrote outside the workspace through a link in it: %s", out)
	}
}

// TestRunCommand_ChildrenDieEvenWhenTheCommandKillsItsWrapper: a command that kills (or stops) the wrapper
// running it does not keep its children alive past the turn: with Landlock's scopes it cannot signal the
// wrapper at all. They used to outlive the turn and the daemon.
func TestRunCommand_ChildrenDieEvenWhenTheCommandKillsItsWrapper(t *testing.T) {
	alsoUnprivileged(t)
	if !scopesAvailable() {
		t.Skip("this kernel lacks Landlock's scopes (ABI 6, Linux 6.12)")
	}
	for name, attack := range map[string]string{
		"kill -9 the wrapper": "kill -9 $PPID",
		"stop the wrapper":    "kill -STOP $PPID",
	} {
		t.Run(name, func(t *testing.T) {
			s, ws := workspace(t)
			command := detached["setsid"] + waitUntilRunning + "\n" + attack + " && echo signalled || echo refused"
			out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(command)+`,"timeoutSeconds":20}`)
			if isErr || !strings.Contains(out, "refused") {
				t.Fatalf("%s", out)
			}
			expectGone(t, readPID(t, ws))
		})
	}
}
