package shared

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
)

// TestOwner_RefusesTheAgentsCommands: a command the agent runs that connects to the shared daemon's socket and
// asks it to run a command line (or to open an editor session) is refused: through the unconfined daemon it
// could act outside its sandbox (a --log-file anywhere, a workspace anywhere). A client outside the agent's
// commands is served.
func TestOwner_RefusesTheAgentsCommands(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is needed as the command's socket client")
	}
	dataDir := t.TempDir()
	ran := make(chan []string, 4)
	startCLIOwner(t, dataDir, func(args []string, _ io.Reader, stdout, _, _ io.Writer) int {
		ran <- args
		_, _ = io.WriteString(stdout, "ran\n")
		return 0
	})
	ws := t.TempDir()
	set, err := tools.New(ws, tools.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	client := filepath.Join(ws, "client.py")
	if err := os.WriteFile(client, []byte(`import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip(), flush=True)
try:
    s.sendall(b'{"eof":true}\n')
    s.makefile().readline()
except OSError:
    pass
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, hello := range []string{
		`{"v":2,"mode":"cli","version":"test","args":["--log-file","/tmp/escaped.log","sessions","list"]}`,
		`{"v":2,"mode":"lsp","version":"test"}`,
	} {
		command := python + " client.py " + strconv.Quote(SocketPath(dataDir)) + " " + shellQuote(hello)
		out, isErr := set.Run(context.Background(), "run_command", `{"command":`+strconv.Quote(command)+`}`)
		if isErr || !strings.Contains(out, `"refused":"the shared alisio daemon does not serve programs the agent runs: process `) ||
			!strings.Contains(out, "runs inside a command the agent runs") {
			t.Fatalf("a command's hello %s: %s", hello, out)
		}
	}
	select {
	case args := <-ran:
		t.Fatalf("the daemon ran %q for a command of the agent", args)
	default:
	}
	// The same client outside the agent's commands (orphaned at once, so that it does not run below this test,
	// the daemon) is served.
	answer := filepath.Join(t.TempDir(), "answer")
	orphan := python + " " + client + " " + strconv.Quote(SocketPath(dataDir)) + " " +
		shellQuote(`{"v":2,"mode":"cli","version":"test","args":["sessions","list"]}`) + " > " + answer + ".tmp && mv " + answer + ".tmp " + answer + " &"
	if out, err := exec.Command("/bin/sh", "-c", orphan).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	testwait.For(t, time.Minute, "the user's client", func() bool { _, err := os.Stat(answer); return err == nil })
	if out, _ := os.ReadFile(answer); strings.Contains(string(out), "refused") || !strings.Contains(string(out), `"pid"`) {
		t.Fatalf("a client of the user: %s", out)
	}
	if args := <-ran; strings.Join(args, " ") != "sessions list" {
		t.Fatalf("ran %q", args)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
