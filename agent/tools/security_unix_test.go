//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"github.com/alisio-lsp/alisio-lsp/storage/storagetest"
)

// TestRunCommand_EnvironmentIsScrubbed: API keys and tokens of the daemon's environment never reach a
// command (printenv would put them in the transcript sent to the model); the toolchain's variables do.
func TestRunCommand_EnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret-1")
	t.Setenv("MY_PROVIDER_KEY", "sk-test-secret-2")
	t.Setenv("GOPRIVATE_TOKEN", "sk-test-secret-3")
	t.Setenv("GITHUB_TOKEN", "sk-test-secret-4")
	t.Setenv("GOFLAGS", "-count=1")
	s, ws := workspace(t)
	out, isErr := s.Run(context.Background(), "run_command", `{"command":"printenv"}`)
	if isErr || strings.Contains(out, "sk-test-secret") {
		t.Fatalf("a secret reached the command: %s", out)
	}
	for _, want := range []string{"PATH=", "HOME=", "GOFLAGS=-count=1", "PWD=" + ws} {
		if !strings.Contains(out, want) {
			t.Errorf("%s missing from the command's environment", want)
		}
	}
}

// TestRunCommand_WritesConfinedToTheWorkspace: with Landlock, a command writes in the workspace and the
// temporary directory, and nowhere else, whatever it does (cd /, absolute paths); reading stays allowed.
func TestRunCommand_WritesConfinedToTheWorkspace(t *testing.T) {
	s, ws := workspace(t)
	if !strings.Contains(Confinement(ws), "Landlock") {
		t.Skip("Landlock is unavailable here: " + Confinement(ws))
	}
	s.RequireSandbox = true
	outside, err := os.MkdirTemp(".", "outside-") // beside the package: not the workspace, not the temp dir
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(outside) })
	outside, _ = filepath.Abs(outside)
	for _, dir := range writableDirs(ws) {
		if strings.HasPrefix(outside, dir+"/") {
			t.Skipf("the checkout is inside a writable directory (%s)", dir)
		}
	}
	target := filepath.Join(outside, "escaped.txt")
	out, _ := s.Run(context.Background(), "run_command", fmt.Sprintf(`{"command":"cd / && echo pwned > %s; echo inside > in.txt 2>&1; cd %s && echo inside > in.txt; cat /etc/hostname >/dev/null && echo read-ok"}`, target, ws))
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("a command wrote outside the workspace: %s", out)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "in.txt")); err != nil || string(b) != "inside\n" {
		t.Fatalf("a command could not write in the workspace: %v %s", err, out)
	}
	if !strings.Contains(out, "read-ok") {
		t.Fatalf("reading outside the workspace should stay allowed: %s", out)
	}
	// The daemon's own threads are not confined: it still writes where it likes.
	must(t, os.WriteFile(filepath.Join(outside, "daemon.txt"), []byte("ok"), 0o600))
}

// TestFiles_HardLinksAndAbsoluteSymlinks: a file with another hard link (maybe outside the workspace) is not
// written; an absolute symlink that points back inside the workspace works like a relative one.
func TestFiles_HardLinksAndAbsoluteSymlinks(t *testing.T) {
	s, ws := workspace(t)
	outside := filepath.Join(filepath.Dir(ws), "outside.txt")
	must(t, os.WriteFile(outside, []byte("keep me"), 0o644))
	must(t, os.Link(outside, filepath.Join(ws, "hard.txt")))
	for _, call := range []struct{ name, args string }{
		{"write_file", `{"path":"hard.txt","content":"changed"}`},
		{"edit_file", `{"path":"hard.txt","oldText":"keep","newText":"lost"}`},
	} {
		if out, isErr := s.Run(context.Background(), call.name, call.args); !isErr || !strings.Contains(out, "hard links") {
			t.Errorf("%s through a hard link: %q", call.name, out)
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep me" {
		t.Fatalf("the file outside the workspace changed: %q", b)
	}
	must(t, os.Symlink(filepath.Join(ws, "src", "a.go"), filepath.Join(ws, "abs-in")))
	must(t, os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "abs-dir")))
	for _, call := range []struct{ name, args, want string }{
		{"read_file", `{"path":"abs-in"}`, "package a"},
		{"list_dir", `{"path":"abs-dir"}`, "a.go"},
		{"search", `{"pattern":"TODO","path":"abs-dir"}`, "TODO fix"},
		{"edit_file", `{"path":"abs-in","oldText":"func A() {}","newText":"func A() { return }"}`, "edited"},
		{"write_file", `{"path":"abs-dir/b.go","content":"package a\n"}`, "wrote"},
	} {
		if out, isErr := s.Run(context.Background(), call.name, call.args); isErr || !strings.Contains(out, call.want) {
			t.Errorf("%s %s: %q", call.name, call.args, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "b.go")); string(b) != "package a\n" {
		t.Fatal("write through an absolute symlink inside the workspace did not land")
	}
}

// TestRunCommand_DiesWithTheDaemon: when the process running tools is SIGKILLed mid-command, the command's
// whole process group goes too (the wrapper sees its pipe to the daemon end), and on Linux so does a process
// the command detached with setsid: nothing keeps running.
func TestRunCommand_DiesWithTheDaemon(t *testing.T) {
	if os.Getenv("ALISIO_TOOLS_HELPER") == "1" {
		s, err := New(os.Getenv("ALISIO_TOOLS_WS"), Limits{OutputChars: 1000, CommandTimeout: time.Minute, MaxCommandTimeout: time.Minute})
		must(t, err)
		s.Run(context.Background(), "run_command", `{"command":"setsid sh -c 'echo $$ > detached; exec sleep 302' >/dev/null 2>&1 & sleep 300 & sleep 301 & while [ ! -s detached ]; do sleep 0.05; done; echo $$ > pids; wait"}`)
		return
	}
	ws := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=TestRunCommand_DiesWithTheDaemon$")
	helper.Env = append(os.Environ(), "ALISIO_TOOLS_HELPER=1", "ALISIO_TOOLS_WS="+ws)
	must(t, helper.Start())
	var shellPID int
	for deadline := time.Now().Add(20 * time.Second); shellPID == 0; {
		if b, err := os.ReadFile(filepath.Join(ws, "pids")); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			shellPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		} else if time.Now().After(deadline) {
			_ = helper.Process.Kill()
			t.Fatal("the helper never started its command")
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	pgid, err := syscall.Getpgid(shellPID)
	must(t, err)
	b, err := os.ReadFile(filepath.Join(ws, "detached"))
	must(t, err)
	detachedPID, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	must(t, helper.Process.Kill())
	_ = helper.Wait()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
			if runtime.GOOS == "linux" {
				expectGone(t, detachedPID)
			} else {
				_ = syscall.Kill(detachedPID, syscall.SIGKILL) // only Linux lets the wrapper adopt it
			}
			return // the whole group is gone
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("the command's process group %d outlived the killed daemon", pgid)
		}
	}
}

func TestTools_WorkspaceEscapesAreRefused(t *testing.T) {
	s, _ := workspace(t)
	for _, tc := range []struct{ name, args string }{
		{"read_file", `{"path":"../secret.txt"}`},
		{"read_file", `{"path":"src/../../secret.txt"}`},
		{"read_file", `{"path":"/etc/passwd"}`},
		{"read_file", `{"path":"link-out"}`},
		{"read_file", `{"path":"dir-out/secret.txt"}`},
		{"write_file", `{"path":"../evil.txt","content":"x"}`},
		{"write_file", `{"path":"dir-out/evil.txt","content":"x"}`},
		{"write_file", `{"path":"link-out","content":"x"}`},
		{"edit_file", `{"path":"link-out","oldText":"password","newText":"x"}`},
		{"list_dir", `{"path":"dir-out"}`},
		{"list_dir", `{"path":".."}`},
		{"search", `{"pattern":"password","path":"dir-out"}`},
	} {
		out, isErr := s.Run(context.Background(), tc.name, tc.args)
		if !isErr || strings.Contains(out, "password") && tc.name != "edit_file" {
			t.Errorf("%s %s: not refused: %q", tc.name, tc.args, out)
		}
		if !strings.Contains(out, "workspace") && !strings.Contains(out, "absolute") {
			t.Errorf("%s %s: the refusal does not say why: %q", tc.name, tc.args, out)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(filepath.Dir(s.Dir()), "secret.txt"))
	if string(raw) != "password" {
		t.Fatal("a file outside the workspace was changed")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.Dir()), "evil.txt")); err == nil {
		t.Fatal("a file was written outside the workspace")
	}
	// A symlink that stays inside is fine.
	if out, isErr := s.Run(context.Background(), "read_file", `{"path":"link-in"}`); isErr || !strings.Contains(out, "package a") {
		t.Fatalf("inner symlink: %q", out)
	}
}

func TestTools_RunCommand(t *testing.T) {
	s, _ := workspace(t)
	ctx := context.Background()
	if out, isErr := s.Run(ctx, "run_command", `{"command":"pwd; echo err >&2; exit 3"}`); !isErr || !strings.HasPrefix(out, "exit code 3") || !strings.Contains(out, "/ws") || !strings.Contains(out, "err") {
		t.Fatalf("run: %q", out)
	}
	start := time.Now()
	out, isErr := s.Run(ctx, "run_command", `{"command":"echo started; sleep 30","timeoutSeconds":1}`)
	if !isErr || !strings.Contains(out, "did not finish") || !strings.Contains(out, "started") || time.Since(start) > 10*time.Second {
		t.Fatalf("timeout: %q after %v", out, time.Since(start))
	}
	if out, _ := s.Run(ctx, "run_command", `{"command":"head -c 100000 /dev/zero | tr '\\0' x"}`); len(out) > 31_000 || !strings.Contains(out, "omitted") {
		t.Fatalf("output cap: %d chars", len(out))
	}
	if s.CatalogChars() < 500 || len(s.Specs()) != 7 {
		t.Fatal("catalog")
	}
	// recall needs the session a turn runs it for: outside one it says so.
	if out, isErr := s.Run(ctx, "recall", `{"query":"x"}`); !isErr || !strings.Contains(out, "belongs to none") {
		t.Fatalf("recall outside a turn: %q", out)
	}
}

// TestRunCommand_BackgroundEndsWithTheCommand: a process the command leaves in the background is killed when
// the command ends (the tool's description says so), instead of running on unseen; one that keeps the
// command's output open does not hold the turn either (it was "WaitDelay expired before I/O complete").
func TestRunCommand_BackgroundEndsWithTheCommand(t *testing.T) {
	for _, command := range []string{"sleep 300 >/dev/null 2>&1 & echo $! > bg; echo done", "sleep 300 & echo $! > bg; echo done"} {
		s, ws := workspace(t)
		out, isErr := s.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(command)+`}`)
		if isErr || !strings.HasPrefix(out, "exit code 0") || !strings.Contains(out, "done") {
			t.Fatalf("%s: %s", command, out)
		}
		b, err := os.ReadFile(filepath.Join(ws, "bg"))
		must(t, err)
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		must(t, err)
		if !testwait.Until(5*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("%s: the background process %d outlived its command", command, pid)
		}
	}
}

// TestRunCommand_HugeOutputStaysBounded: a command writing 300 MB costs the daemon a bounded buffer, not the
// whole output (15.6 GB were seen for 2 GB), and the model gets its head and tail with the omission said.
func TestRunCommand_HugeOutputStaysBounded(t *testing.T) {
	s, _ := workspace(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, isErr := s.Run(context.Background(), "run_command", `{"command":"echo first; head -c 300000000 /dev/zero | tr '\\0' x; echo; echo last","timeoutSeconds":60}`)
	runtime.ReadMemStats(&after)
	if isErr || !strings.Contains(out, "first") || !strings.Contains(out, "last") || !strings.Contains(out, "omitted") || len(out) > 31_000 {
		t.Fatalf("run_command: %d chars: %.200s … %.200s", len(out), out, out[max(0, len(out)-200):])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("the command's 300 MB of output cost %d MB of allocations; want a bounded buffer", alloc>>20)
	}
}

// TestTools_SpecialFilesAreRefused: a FIFO in the workspace is refused by read_file, write_file and edit_file at
// once (reading one hung the turn for good); search skips it; a dangling symlink leading out is refused, not
// replaced by a file.
func TestTools_SpecialFilesAreRefused(t *testing.T) {
	s, ws := workspace(t)
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))
	must(t, os.Symlink("/nonexistent-outside/file", filepath.Join(ws, "dangling-out")))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, call := range []struct{ name, args, want string }{
		{"read_file", `{"path":"pipe"}`, "pipe is a FIFO (named pipe), not a regular file"},
		{"write_file", `{"path":"pipe","content":"x"}`, "pipe is a FIFO (named pipe), not a regular file"},
		{"edit_file", `{"path":"pipe","oldText":"a","newText":"b"}`, "pipe is a FIFO (named pipe), not a regular file"},
		{"write_file", `{"path":"dangling-out","content":"x"}`, "outside the workspace"},
	} {
		if out, isErr := s.Run(ctx, call.name, call.args); !isErr || !strings.Contains(out, call.want) {
			t.Errorf("%s %s: %q; want %q", call.name, call.args, out, call.want)
		}
	}
	if out, _ := s.Run(ctx, "search", `{"pattern":"x"}`); ctx.Err() != nil {
		t.Fatalf("search hung on the FIFO: %s", out)
	}
	if target, err := os.Readlink(filepath.Join(ws, "dangling-out")); err != nil || target != "/nonexistent-outside/file" {
		t.Errorf("the symlink was replaced: %q %v", target, err)
	}
}

// TestTools_WriteOnAFullDiskKeepsTheOriginal: write_file and edit_file write beside the file and rename over
// it, so a full disk leaves the original as it was (it became 1 MB of Z before) and no temporary file behind.
func TestTools_WriteOnAFullDiskKeepsTheOriginal(t *testing.T) {
	dir := storagetest.SmallDisk(t, "2m")
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o640))
	s, err := New(dir, DefaultLimits())
	must(t, err)
	defer s.Close()
	storagetest.Fill(t, dir, 64<<10)
	big := strings.Repeat("Z", 1<<20)
	for _, call := range []struct{ name, args string }{
		{"write_file", `{"path":"a.txt","content":"` + big + `"}`},
		{"edit_file", `{"path":"a.txt","oldText":"hello","newText":"` + big + `"}`},
	} {
		if out, isErr := s.Run(context.Background(), call.name, call.args); !isErr || !strings.Contains(out, "no space left") {
			t.Errorf("%s on a full disk: %.200q", call.name, out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "hello\n" {
			t.Fatalf("%s destroyed the original: %d bytes", call.name, len(b))
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temporary file was left: %s", e.Name())
		}
	}
	if out, isErr := s.Run(context.Background(), "write_file", `{"path":"a.txt","content":"bye\n"}`); isErr {
		t.Fatal(out)
	}
	if info, _ := os.Stat(filepath.Join(dir, "a.txt")); info.Mode().Perm() != 0o640 {
		t.Errorf("the rewrite changed the file's mode to %v", info.Mode().Perm())
	}
}

// expectGone waits a few seconds for process pid to end, and kills it and fails if it does not.
func expectGone(t *testing.T, pid int) {
	t.Helper()
	if !testwait.Until(5*time.Second, func() bool { return syscall.Kill(pid, 0) != nil }) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d outlived its command", pid)
	}
}
