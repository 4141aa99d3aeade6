// Package shared lets every editor window (and the command line) of a user work on one session store: the
// first `alisio-lsp serve` starts an owner daemon that holds the store and listens on a Unix socket private to
// the user; every `serve` forwards its editor's LSP stream to it, and CLI commands run inside it while it runs.
// gopls -remote=auto is the model.
package shared

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// ProtocolVersion is the "v" of the hello lines; a forwarder and an owner of different versions still speak
// LSP to each other, and the forwarder warns the user. Version 2: a CLI's standard input follows its hello
// as "stdin" lines, and the command's logs come back as "log" lines.
const ProtocolVersion = 2

// Bounds of what a client may send before it is known to be one: the hello line's size, and the time it has
// to send it. A longer or slower hello is refused and the connection closed.
const (
	maxHello     = 4 << 20
	helloTimeout = 10 * time.Second
	// maxInputLine bounds one "stdin" line of a CLI (its chunks are 32 KiB).
	maxInputLine = 1 << 20
	// inputChunk is how much of its standard input a CLI sends per line.
	inputChunk = 32 << 10
)

// DefaultIdle is how long an owner with no client stays up.
const DefaultIdle = 5 * time.Minute

// Hello is the first line a client sends on the socket; Welcome the owner's answer.
type Hello struct {
	V       int      `json:"v"`
	Mode    string   `json:"mode"` // "lsp": an editor's stream follows; "cli": run Args and stream the output back
	Version string   `json:"version"`
	Args    []string `json:"args,omitempty"`
	Dir     string   `json:"dir,omitempty"`
}

// input is a line a CLI sends after its hello: a chunk of its standard input, or its end.
type input struct {
	Stdin []byte `json:"stdin,omitempty"`
	EOF   bool   `json:"eof,omitempty"`
}

// Welcome answers a Hello.
type Welcome struct {
	V       int    `json:"v"`
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// Refused, when set, says why the owner will not serve this client (then it closes the connection).
	Refused string `json:"refused,omitempty"`
}

// SocketPath is where the owner of dataDir listens (see osproc.DaemonSocket).
func SocketPath(dataDir string) string { return osproc.DaemonSocket(dataDir) }

// checkSocket checks the place of the socket at path: its directory must be the user's own (the data directory
// or the runtime directory; made when create is set), and whatever is at path must be a socket, which is only
// ever a stale one to replace when the owner lock is held. A file or directory there is refused, never removed.
func checkSocket(path string, create bool) error {
	dir := filepath.Dir(path)
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating the socket's directory %s: %w", dir, err)
		}
	}
	if info, err := os.Stat(dir); err != nil {
		return fmt.Errorf("checking the socket's directory %s: %w", dir, err)
	} else if uid, foreign := osproc.ForeignOwner(info); foreign {
		return fmt.Errorf("the directory of the shared daemon's socket, %s, belongs to another user (uid %d), so alisio will not use it: "+
			"fix XDG_RUNTIME_DIR, or run `alisio-lsp serve --no-shared`", dir, uid)
	}
	info, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("checking the shared daemon's socket %s: %w", path, err)
	case info.IsDir() || info.Mode().IsRegular() || info.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s, where the shared daemon's socket goes, is a %s that alisio did not make; it was left alone: move it away, or run `alisio-lsp serve --no-shared`",
			path, kindOf(info))
	}
	if uid, foreign := osproc.ForeignOwner(info); foreign {
		return fmt.Errorf("the shared daemon's socket %s belongs to another user (uid %d): alisio will not talk to it; remove it, or run `alisio-lsp serve --no-shared`", path, uid)
	}
	return nil
}

func kindOf(info fs.FileInfo) string {
	switch {
	case info.IsDir():
		return "directory"
	case info.Mode()&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "file"
}

// stillThere reports whether what stat finds at path is still the file of was.
func stillThere(path string, was os.FileInfo, stat func(string) (os.FileInfo, error)) bool {
	now, err := stat(path)
	return err == nil && os.SameFile(was, now)
}

// ErrOrphaned: the owner's data directory or socket was removed while it ran; it stops without touching the
// store (whose files are gone).
var ErrOrphaned = errors.New("the shared daemon's data directory or socket was removed")

// ErrRunning: another owner holds dataDir.
var ErrRunning = errors.New("another alisio-lsp daemon owns this data directory")

// Lock takes the owner lock of dataDir (a file lock the system releases when the process dies, however it
// dies); the caller holds it for its life. ErrRunning when another process has it.
func Lock(dataDir string) (*os.File, error) {
	if err := storage.PrivateDir(dataDir, "data directory"); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dataDir, "owner.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if held, err := osproc.LockFile(f); held || err != nil {
		f.Close()
		if held {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("locking %s: %w", f.Name(), err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
	return f, nil
}

// OwnerRunning reports whether a live process holds the owner lock of dataDir, or did until now (a shared
// daemon starting or stopping), from the PID Lock writes there; the lock itself is left alone.
func OwnerRunning(dataDir string) bool {
	raw, err := os.ReadFile(filepath.Join(dataDir, "owner.lock"))
	if err != nil {
		return false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	return err == nil && pid > 0 && pid != os.Getpid() && osproc.Alive(pid)
}

// Owner serves editor connections and CLI invocations on the socket of DataDir.
type Owner struct {
	DataDir string
	Version string
	// Idle is how long it stays up without clients (DefaultIdle when 0).
	Idle time.Duration
	Log  *zap.Logger
	// ServeLSP runs one editor's LSP session on conn until it ends.
	ServeLSP func(ctx context.Context, conn io.ReadWriteCloser)
	// RunCLI runs one command line in dir with the owner's store and returns its exit code; the command's logs
	// go to log (the CLI writes them where its --log-file says).
	RunCLI func(ctx context.Context, args []string, dir string, stdin io.Reader, stdout, stderr, log io.Writer) int
}

// Run listens until ctx ends or no client came for Idle. The caller holds Lock(DataDir).
func (o *Owner) Run(ctx context.Context) error {
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	path := SocketPath(o.DataDir)
	if err := checkSocket(path, true); err != nil {
		return err
	}
	_ = os.Remove(path) // stale: we hold the owner lock, so no other owner listens there
	restore := osproc.PrivateUmask()
	ln, err := net.Listen("unix", path)
	restore()
	if err != nil {
		return fmt.Errorf("listening on %s: %w", path, err)
	}
	defer os.Remove(path)
	_ = os.Chmod(path, 0o600)
	o.Log.Info("shared daemon listening", zap.String("socket", path), zap.Duration("idle", o.Idle))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	clients := 0
	idle := time.AfterFunc(o.Idle, cancel)
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var orphaned atomic.Bool
	// The directory and the socket this daemon owns, to tell them from ones made again at the same paths.
	dirInfo, derr := os.Stat(o.DataDir)
	sockInfo, serr := os.Lstat(path)
	if derr != nil || serr != nil {
		return fmt.Errorf("%w while starting", ErrOrphaned)
	}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if !stillThere(path, sockInfo, os.Lstat) || !stillThere(o.DataDir, dirInfo, os.Stat) {
					o.Log.Warn("the data directory or the socket was removed; stopping", zap.String("dataDir", o.DataDir), zap.String("socket", path))
					orphaned.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			o.Log.Warn("accepting a client", zap.Error(err))
			continue
		}
		mu.Lock()
		clients++
		idle.Stop()
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.handle(ctx, conn)
			mu.Lock()
			if clients--; clients == 0 {
				idle.Reset(o.Idle)
			}
			mu.Unlock()
		}()
	}
	if _, err := os.Stat(o.DataDir); orphaned.Load() || err != nil {
		return ErrOrphaned // its clients' connections are cut: nothing they could save is left
	}
	wg.Wait()
	o.Log.Info("shared daemon stopping: no client for the idle time, or asked to")
	return nil
}

func (o *Owner) handle(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(helloTimeout))
	line, err := readLine(r, maxHello)
	_ = conn.SetReadDeadline(time.Time{})
	var hello Hello
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err != nil {
		o.Log.Warn("a client sent no hello", zap.Error(err))
		return
	}
	if why := osproc.AgentPeer(conn); why != "" {
		// A program the agent runs (or another user) must not drive the daemon: it would act outside the
		// sandbox with the daemon's rights. Its hello was read (bounded) so that it gets this answer.
		o.Log.Warn("refused a client of the shared daemon", zap.String("why", why))
		refused, _ := json.Marshal(Welcome{V: ProtocolVersion, Version: o.Version, PID: os.Getpid(),
			Refused: "the shared alisio daemon does not serve programs the agent runs: " + why})
		_, _ = conn.Write(append(refused, '\n'))
		return
	}
	welcome, _ := json.Marshal(Welcome{V: ProtocolVersion, Version: o.Version, PID: os.Getpid()})
	if _, err := conn.Write(append(welcome, '\n')); err != nil {
		return
	}
	switch hello.Mode {
	case "lsp":
		o.ServeLSP(ctx, readWriteCloser{r, conn})
	case "cli":
		// The CLI's standard input arrives as it is read (a pipe: bounded memory, whatever its size); after its
		// end the CLI sends nothing more, so the end of its side of the connection is the CLI going away
		// (Ctrl-C, killed), which stops the command.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stdin, stdinW := io.Pipe()
		defer stdin.Close()
		go func() {
			err := copyInput(r, stdinW)
			stdinW.CloseWithError(err)
			if err == nil {
				_, _ = io.Copy(io.Discard, r)
			}
			cancel()
		}()
		out := &lineWriter{enc: json.NewEncoder(conn)}
		code := o.RunCLI(ctx, hello.Args, hello.Dir, stdin, out.stream("stdout"), out.stream("stderr"), out.stream("log"))
		out.write(map[string]any{"exit": code})
	default:
		o.Log.Warn("unknown client mode", zap.String("mode", hello.Mode))
	}
}

// readLine reads one line of at most limit bytes (its newline excluded).
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 {
			return nil, fmt.Errorf("a line longer than %d bytes", limit)
		}
		line = append(line, chunk...)
		switch err {
		case nil:
			return line[:len(line)-1], nil
		case bufio.ErrBufferFull:
			continue
		default:
			return nil, err
		}
	}
}

// copyInput writes the "stdin" lines a CLI sends to w until its "eof" line; it fails when the connection ends
// before, or on a line that is not one.
func copyInput(r *bufio.Reader, w io.Writer) error {
	for {
		line, err := readLine(r, maxInputLine)
		if err != nil {
			return fmt.Errorf("reading the command line's standard input: %w", err)
		}
		var in input
		if err := json.Unmarshal(line, &in); err != nil {
			return fmt.Errorf("reading the command line's standard input: %w", err)
		}
		if in.EOF {
			return nil
		}
		if _, err := w.Write(in.Stdin); err != nil {
			return err
		}
	}
}

// sendInput sends stdin to the owner as "stdin" lines, then "eof"; nil stdin sends only the end.
func sendInput(conn net.Conn, stdin io.Reader) error {
	enc := json.NewEncoder(conn)
	if stdin != nil {
		buf := make([]byte, inputChunk)
		for {
			n, err := stdin.Read(buf)
			if n > 0 {
				if werr := enc.Encode(input{Stdin: buf[:n]}); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("reading stdin: %w", err)
			}
		}
	}
	return enc.Encode(input{EOF: true})
}

type readWriteCloser struct {
	io.Reader
	conn net.Conn
}

func (c readWriteCloser) Write(p []byte) (int, error) { return c.conn.Write(p) }
func (c readWriteCloser) Close() error                { return c.conn.Close() }

// lineWriter streams a CLI run's output as JSON lines {"stdout": text} / {"stderr": text}, then {"exit": n}.
type lineWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (l *lineWriter) write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = l.enc.Encode(v)
}

type streamWriter struct {
	l    *lineWriter
	name string
}

func (l *lineWriter) stream(name string) io.Writer { return streamWriter{l, name} }

func (s streamWriter) Write(p []byte) (int, error) {
	s.l.write(map[string]string{s.name: string(p)})
	return len(p), nil
}

// RunRemote runs a command line in the owner of dataDir, copying its output to stdout and stderr and its logs
// to log, and returns its exit code; ok is false when no owner answers (run it locally then). stdin, when not
// nil, is streamed to the command as it reads it. Ctrl-C, a kill or the terminal closing (or ctx ending, for a
// command that caught one of those before it got here) closes the connection, which stops the command in the
// daemon; the code is then 130.
func RunRemote(ctx context.Context, dataDir string, args []string, dir string, stdin io.Reader, version string, stdout, stderr, log io.Writer) (code int, ok bool) {
	// Listen before the daemon can start the command: a signal that came between would be lost.
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, osproc.StopSignals()...)
	defer signal.Stop(interrupted)
	if checkSocket(SocketPath(dataDir), false) != nil {
		return 0, false // the command then opens the store itself, and says what is wrong with the data directory
	}
	conn, err := net.DialTimeout("unix", SocketPath(dataDir), 2*time.Second)
	if err != nil {
		return 0, false
	}
	defer conn.Close()
	stopped := make(chan struct{})
	defer close(stopped)
	var wasInterrupted atomic.Bool
	go func() {
		select {
		case <-interrupted:
		case <-ctx.Done():
		case <-stopped:
			return
		}
		wasInterrupted.Store(true)
		conn.Close()
	}()
	hello, _ := json.Marshal(Hello{V: ProtocolVersion, Mode: "cli", Version: version, Args: args, Dir: dir})
	if _, err := conn.Write(append(hello, '\n')); err != nil {
		return remoteStopped(stderr, &wasInterrupted)
	}
	dec := json.NewDecoder(bufio.NewReader(conn))
	var welcome Welcome
	if err := dec.Decode(&welcome); err != nil {
		return remoteStopped(stderr, &wasInterrupted)
	}
	if welcome.Refused != "" {
		fmt.Fprintf(stderr, "alisio-lsp: %s\n", welcome.Refused)
		return 1, true
	}
	inputErr := make(chan error, 1)
	go func() { inputErr <- sendInput(conn, stdin) }()
	for {
		var line struct {
			Stdout *string `json:"stdout"`
			Stderr *string `json:"stderr"`
			Log    *string `json:"log"`
			Exit   *int    `json:"exit"`
		}
		if err := dec.Decode(&line); err != nil {
			if wasInterrupted.Load() {
				return remoteStopped(stderr, &wasInterrupted)
			}
			select {
			case ierr := <-inputErr:
				if ierr != nil {
					err = ierr
				}
			default:
			}
			fmt.Fprintf(stderr, "alisio-lsp: the shared daemon stopped during the command: %v\n", err)
			return 1, true
		}
		switch {
		case line.Stdout != nil:
			_, _ = io.WriteString(stdout, *line.Stdout)
		case line.Stderr != nil:
			_, _ = io.WriteString(stderr, *line.Stderr)
		case line.Log != nil && log != nil:
			_, _ = io.WriteString(log, *line.Log)
		case line.Exit != nil:
			return *line.Exit, true
		}
	}
}

// remoteStopped is RunRemote's result when the connection broke before the command ended: stopped by the user
// (said, code 130), or no owner to run it (not ok: the command runs locally).
func remoteStopped(stderr io.Writer, interrupted *atomic.Bool) (int, bool) {
	if !interrupted.Load() {
		return 0, false
	}
	fmt.Fprintln(stderr, "alisio-lsp: stopped (a compaction stopped leaves the session as it was; a turn keeps what it did)")
	return 130, true
}
