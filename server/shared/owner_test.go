package shared

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"go.uber.org/zap"
)

// needUnixSockets skips the test where Unix sockets cannot be listened on (Wine; Windows 10 and later have
// them).
func needUnixSockets(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "probe.sock"))
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	ln.Close()
}

// startCLIOwner runs an owner in this process whose CLI side runs run.
func startCLIOwner(t *testing.T, dataDir string, run func(args []string, stdin io.Reader, stdout, stderr, log io.Writer) int) {
	t.Helper()
	needUnixSockets(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	owner := &Owner{DataDir: dataDir, Version: "test", Log: zap.NewNop(),
		RunCLI: func(_ context.Context, args []string, _ string, stdin io.Reader, stdout, stderr, log io.Writer) int {
			return run(args, stdin, stdout, stderr, log)
		}}
	go func() { done <- owner.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	testwait.For(t, time.Minute, "the owner to listen", func() bool {
		conn, err := net.Dial("unix", SocketPath(dataDir))
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
}

// TestOwner_AHelloWithoutEndIsRefused: a client that sends a hello line of more than 4 MiB (here 64 MiB with
// no newline) is disconnected once the bound is passed; the whole line used to be buffered (1 GB → 2 GB).
func TestOwner_AHelloWithoutEndIsRefused(t *testing.T) {
	dataDir := t.TempDir()
	startCLIOwner(t, dataDir, func([]string, io.Reader, io.Writer, io.Writer, io.Writer) int { return 0 })
	conn, err := net.Dial("unix", SocketPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	written := 0
	for ; written < 64; written++ {
		_ = conn.SetWriteDeadline(time.Now().Add(time.Minute))
		if _, err := conn.Write(chunk); err != nil {
			break
		}
	}
	if written == 64 {
		t.Fatal("the owner read 64 MiB of a hello line without refusing it")
	}
}

// TestOwner_StdinIsStreamed: a CLI's standard input reaches the command as it is read, and the command's logs
// come back apart from its output.
func TestOwner_StdinIsStreamed(t *testing.T) {
	dataDir := t.TempDir()
	startCLIOwner(t, dataDir, func(args []string, stdin io.Reader, stdout, stderr, log io.Writer) int {
		n, err := io.Copy(io.Discard, stdin)
		if err != nil {
			return 3
		}
		_, _ = io.WriteString(log, "read "+strings.Join(args, " ")+"\n")
		_, _ = io.WriteString(stdout, "bytes "+strconv.FormatInt(n, 10)+"\n")
		return 0
	})
	var stdout, stderr, log bytes.Buffer
	input := strings.NewReader(strings.Repeat("0123456789abcdef", 1<<16)) // 1 MiB: many lines of input
	code, ok := RunRemote(context.Background(), dataDir, []string{"sessions", "import", "-"}, t.TempDir(), input, "test", &stdout, &stderr, &log)
	if !ok || code != 0 || stdout.String() != "bytes 1048576\n" || log.String() != "read sessions import -\n" {
		t.Fatalf("remote run: ok %v code %d stdout %q stderr %q log %q", ok, code, stdout.String(), stderr.String(), log.String())
	}
}

// TestOwner_AStopBeforeTheCommandStarts: a CLI that was stopped (its context ended: Ctrl-C or the terminal
// closing caught by the command before it reached the daemon) does not wait for the command the daemon would run;
// it says it stopped, with code 130. A signal in that gap used to be lost, and the CLI waited for the whole turn.
func TestOwner_AStopBeforeTheCommandStarts(t *testing.T) {
	dataDir := t.TempDir()
	release := make(chan struct{})
	startCLIOwner(t, dataDir, func([]string, io.Reader, io.Writer, io.Writer, io.Writer) int {
		<-release // a turn that would outlast the test
		return 0
	})
	// Registered after the owner's cleanup, so it runs before it: the hello can reach the owner before the
	// stop closes the connection, and the owner's Run then waits for this command to return.
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	code, ok := RunRemote(ctx, dataDir, []string{"prompt", "wait for it"}, t.TempDir(), nil, "test", &stdout, &stderr, nil)
	if !ok || code != 130 || !strings.Contains(stderr.String(), "alisio-lsp: stopped") {
		t.Fatalf("remote run: ok %v code %d stderr %q", ok, code, stderr.String())
	}
}
