package tools

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
)

// TestRunCommand_Windows: commands run in cmd.exe in the workspace with their exit code and output; a process
// the command leaves running (start /b) is ended with it by the Job Object; a timeout ends the whole tree.
func TestRunCommand_Windows(t *testing.T) {
	s, ws := workspace(t)
	ctx := context.Background()
	out, isErr := s.Run(ctx, "run_command", `{"command":"cd & echo err 1>&2 & exit 3"}`)
	if !isErr || !strings.HasPrefix(out, "exit code 3") || !strings.Contains(out, filepath.Base(ws)) || !strings.Contains(out, "err") {
		t.Fatalf("run: %q", out)
	}
	// A background process: a copy of this test binary, started with start /b, writes its PID and waits.
	exe, err := os.Executable()
	must(t, err)
	pidFile := filepath.Join(ws, "bg.pid")
	cmd := `start /b "" "` + exe + `" -test.run=TestRunCommandHelper alisio-bg & ping -n 4 127.0.0.1 >NUL & exit 0` // time for it to write its PID
	if out, isErr := s.Run(ctx, "run_command", strconvQuote(cmd)); isErr || !strings.HasPrefix(out, "exit code 0") {
		t.Fatalf("start /b: %q", out)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the background helper never started")
		}
	}
	if !testwait.Until(10*time.Second, func() bool { return !osproc.Alive(pid) }) {
		_ = osproc.KillGroup(pid)
		t.Fatalf("the background process %d outlived its command", pid)
	}
	start := time.Now()
	out, isErr = s.Run(ctx, "run_command", `{"command":"echo started & ping -n 30 127.0.0.1 >NUL","timeoutSeconds":1}`)
	if !isErr || !strings.Contains(out, "did not finish") || time.Since(start) > 15*time.Second {
		t.Fatalf("timeout: %q after %v", out, time.Since(start))
	}
}

// TestRunCommandHelper is the background process of TestRunCommand_Windows (started with the argument
// alisio-bg in the workspace): it writes its PID to bg.pid and waits.
func TestRunCommandHelper(t *testing.T) {
	if flag.Arg(0) != "alisio-bg" {
		t.Skip("a helper process of TestRunCommand_Windows")
	}
	_ = os.WriteFile("bg.pid", []byte(strconv.Itoa(os.Getpid())), 0o644)
	time.Sleep(time.Minute)
}

func strconvQuote(command string) string {
	return `{"command":` + strconv.Quote(command) + `,"timeoutSeconds":30}`
}
