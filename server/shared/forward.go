package shared

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/server"
)

// Forwarder is what an editor starts (`alisio-lsp serve`): it connects the editor's stdio to the owner of the
// data directory, starting the owner when none runs, and keeps the editor's session alive across an owner
// that dies: it starts a new one, replays the editor's initialize, initialized and settings, answers the
// requests that were in flight with an error, and tells the user.
type Forwarder struct {
	Version string
	Log     *zap.Logger
	// DataDir resolves the data directory, given the initializationOptions of the editor's initialize.
	DataDir func(initializationOptions json.RawMessage) (string, error)
	// StartOwner starts an owner process for dataDir in the background (several may race: one wins the lock).
	// exited receives the process's end: nil when it left because another owner holds the data directory (the
	// forwarder then waits for that one), else why it failed (the forwarder stops waiting and says so).
	StartOwner func(dataDir string) (exited <-chan error, err error)
	// ConnectTimeout bounds the wait for an owner to listen (default 15 s).
	ConnectTimeout time.Duration

	out     io.Writer
	outMu   sync.Mutex
	dataDir string

	// gate is held for writing while a new owner is being set up, so that the editor's messages wait for the
	// replayed initialize to be answered.
	gate sync.RWMutex

	mu       sync.Mutex
	conn     net.Conn
	replay   [][]byte // initialize (with its id replaced), initialized
	settings []byte   // the editor's last workspace/didChangeConfiguration, replayed after them
	// connected is set once a first owner answered; from then on the data directory is never made again.
	connected bool
	inflight  map[string]json.RawMessage // request id (as text) → id
	shutdown  bool
	exiting   bool
}

// replayID is the id of a replayed initialize, whose answer the editor must not see.
const replayID = `"alisio-replay-initialize"`

// Run forwards until the editor exits; the result is the LSP exit code (0 after shutdown then exit).
func (f *Forwarder) Run(ctx context.Context, in io.Reader, out io.Writer) int {
	f.out, f.inflight = out, map[string]json.RawMessage{}
	if f.ConnectTimeout <= 0 {
		f.ConnectTimeout = 15 * time.Second
	}
	// The editor is read as the daemon reads it: bad frames are answered here and skipped.
	rin := server.NewFrameReader(in, editorWriter{f}, 0)
	first, err := rin.Next()
	if err != nil {
		f.Log.Warn("the editor sent nothing", zap.Error(err))
		return 1
	}
	var init struct {
		Params struct {
			InitializationOptions json.RawMessage `json:"initializationOptions"`
		} `json:"params"`
	}
	_ = json.Unmarshal(first, &init)
	if f.dataDir, err = f.DataDir(init.Params.InitializationOptions); err != nil {
		f.Log.Error("no data directory", zap.Error(err))
		return 1
	}
	if err := f.connect(ctx); err != nil {
		f.fail(first, err)
		return 1
	}
	f.fromEditor(first)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			body, err := rin.Next()
			if err != nil {
				return
			}
			if f.fromEditor(body) {
				return
			}
		}
	}()
	go f.fromOwner(ctx)
	<-done
	f.mu.Lock()
	code := 1
	if f.exiting && f.shutdown {
		code = 0
	}
	if f.conn != nil {
		// Let the owner read the exit before the connection closes.
		time.Sleep(50 * time.Millisecond)
		f.conn.Close()
	}
	f.mu.Unlock()
	return code
}

// connect reaches the owner, starting one when none answers.
func (f *Forwarder) connect(ctx context.Context) error {
	path := SocketPath(f.dataDir)
	f.mu.Lock()
	restarting := f.connected
	f.mu.Unlock()
	if _, err := os.Stat(f.dataDir); restarting && err != nil {
		// Removed while the editor ran (by the user, or a test cleaning up): it is not made again behind
		// their back; restarting the editor's server starts afresh.
		return fmt.Errorf("its data directory %s was removed; restart the editor's Alisio server to start with a new one", f.dataDir)
	}
	if err := checkSocket(path, !restarting); err != nil {
		return err
	}
	deadline := time.Now().Add(f.ConnectTimeout)
	started := false
	var exited <-chan error
	for {
		conn, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			if err = f.greet(conn); err == nil {
				f.mu.Lock()
				f.conn, f.connected = conn, true
				f.mu.Unlock()
				return nil
			}
			conn.Close()
			var refused refusedError
			if errors.As(err, &refused) {
				return err
			}
		}
		if !started {
			var serr error
			if exited, serr = f.StartOwner(f.dataDir); serr != nil {
				return fmt.Errorf("starting the shared daemon: %w", serr)
			}
			started = true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the shared daemon did not answer on %s within %v (see %s/daemon.log): %w", path, f.ConnectTimeout, f.dataDir, err)
		}
		select {
		case failed := <-exited:
			if failed != nil {
				return fmt.Errorf("the shared daemon stopped while starting (%v); its log is %s", failed, filepath.Join(f.dataDir, "daemon.log"))
			}
			exited = nil // another owner holds the data directory: wait for it to listen
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (f *Forwarder) greet(conn net.Conn) error {
	hello, _ := json.Marshal(Hello{V: ProtocolVersion, Mode: "lsp", Version: f.Version})
	if _, err := conn.Write(append(hello, '\n')); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer conn.SetReadDeadline(time.Time{})
	var line []byte
	buf := make([]byte, 1)
	for {
		if _, err := conn.Read(buf); err != nil {
			return err
		}
		if buf[0] == '\n' {
			break
		}
		line = append(line, buf[0])
	}
	var w Welcome
	if err := json.Unmarshal(line, &w); err != nil {
		return err
	}
	if w.Refused != "" {
		return refusedError(w.Refused)
	}
	if w.Version != f.Version {
		f.Log.Warn("the shared daemon is another version", zap.String("daemon", w.Version), zap.String("editor's", f.Version))
		f.notify(2, fmt.Sprintf("Alisio: the shared daemon runs version %s and this window's alisio-lsp is %s; restart the editors (or run `alisio-lsp serve --no-shared`) to use one version.", w.Version, f.Version))
	}
	return nil
}

// fromEditor forwards one editor message, following the session; it reports the editor's exit.
func (f *Forwarder) fromEditor(body []byte) (exit bool) {
	m := peek(body)
	f.mu.Lock()
	switch {
	case m.Method == "initialize" && m.isRequest():
		var v map[string]json.RawMessage
		if json.Unmarshal(body, &v) == nil {
			v["id"] = json.RawMessage(replayID)
			replay, _ := json.Marshal(v)
			f.replay = append(f.replay, replay)
		}
	case m.Method == "initialized":
		f.replay = append(f.replay, body)
	case m.Method == "workspace/didChangeConfiguration":
		f.settings = body // only the last settings are replayed
	case m.Method == "shutdown":
		f.shutdown = true
	case m.Method == "exit":
		f.exiting = true
	}
	f.mu.Unlock()
	f.gate.RLock()
	defer f.gate.RUnlock()
	f.mu.Lock()
	conn := f.conn
	if conn != nil && m.isRequest() {
		f.inflight[string(m.ID)] = m.ID
	}
	f.mu.Unlock()
	switch {
	case conn != nil:
		_ = server.WriteFrame(conn, body)
	case m.isRequest() && m.Method == "shutdown":
		f.write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":null}`))
	case m.isRequest():
		f.answerError(m.ID, "Alisio: the shared alisio-lsp daemon is not running and is being restarted; retry in a moment (Alisio says when it is back)")
	}
	return m.Method == "exit"
}

// fromOwner copies the owner's messages to the editor; when the owner goes away before the editor exits, it
// starts another and carries on.
func (f *Forwarder) fromOwner(ctx context.Context) {
	f.mu.Lock()
	r := server.NewFrameReader(f.conn, io.Discard, maxReply)
	f.mu.Unlock()
	for {
		for {
			body, err := r.Next()
			if err != nil {
				break
			}
			m := peek(body)
			if m.isResponse() {
				f.mu.Lock()
				delete(f.inflight, string(m.ID))
				f.mu.Unlock()
			}
			f.write(body)
		}
		if r = f.reconnect(ctx); r == nil {
			return
		}
	}
}

// Pauses between attempts to restart the shared daemon: doubling from the first to the last.
const (
	firstRetry = time.Second
	lastRetry  = 30 * time.Second
)

// reconnect starts new owners until one answers, pausing longer after each failure, for as long as the
// editor is connected; meanwhile the editor's requests are answered with an error at once. It tells the user
// when the owner could not be restarted and again when it is back. It returns the new connection's reader,
// or nil when the editor left.
func (f *Forwarder) reconnect(ctx context.Context) *server.FrameReader {
	pause := firstRetry
	for attempt := 1; ; attempt++ {
		f.mu.Lock()
		exiting := f.exiting
		f.mu.Unlock()
		if exiting || ctx.Err() != nil {
			return nil
		}
		r, err := f.recover(ctx)
		switch {
		case err == nil && attempt == 1:
			f.notify(2, "Alisio: the shared daemon stopped and was restarted; requests that were running got an error and can be retried.")
			return r
		case err == nil:
			f.notify(3, "Alisio: the shared daemon is back; you can go on.")
			return r
		case attempt == 1:
			f.notify(1, "Alisio: the shared daemon stopped and could not be restarted: "+err.Error()+
				". Alisio keeps trying in the background and says when it is back; until then requests fail at once.")
		}
		f.Log.Warn("the shared daemon could not be restarted", zap.Int("attempt", attempt), zap.Duration("next", pause), zap.Error(err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(pause):
		}
		pause = min(2*pause, lastRetry)
	}
}

// recover answers the requests the lost owner was running, connects to a new owner, replays the editor's
// session (waiting for the replayed initialize to be answered before anything else reaches the owner), and
// returns the reader of the new connection.
func (f *Forwarder) recover(ctx context.Context) (*server.FrameReader, error) {
	f.Log.Warn("the shared daemon went away; starting another")
	f.gate.Lock()
	defer f.gate.Unlock()
	f.mu.Lock()
	if f.conn != nil {
		f.conn.Close()
		f.conn = nil // until a new owner answers, the editor's requests are answered here
	}
	lost := f.inflight
	f.inflight = map[string]json.RawMessage{}
	f.mu.Unlock()
	for _, id := range lost {
		f.answerError(id, "the shared alisio-lsp daemon stopped while this request ran; its outcome is unknown (what was saved before is kept): retry it")
	}
	if err := f.connect(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	conn, replay := f.conn, append([][]byte(nil), f.replay...)
	if f.settings != nil {
		replay = append(replay, f.settings)
	}
	f.mu.Unlock()
	r := server.NewFrameReader(conn, io.Discard, maxReply)
	for i, body := range replay {
		if err := server.WriteFrame(conn, body); err != nil {
			return nil, f.drop(conn, err)
		}
		if i > 0 {
			continue
		}
		for { // the answer to the replayed initialize is not the editor's
			resp, err := r.Next()
			if err != nil {
				return nil, f.drop(conn, err)
			}
			if m := peek(resp); m.isResponse() && string(m.ID) == replayID {
				break
			}
			f.write(resp)
		}
	}
	return r, nil
}

// drop forgets conn, an owner that failed during the replay, and returns err.
func (f *Forwarder) drop(conn net.Conn, err error) error {
	f.mu.Lock()
	if f.conn == conn {
		f.conn = nil
	}
	f.mu.Unlock()
	conn.Close()
	return fmt.Errorf("the new shared daemon failed during the restart: %w", err)
}

// answerError answers request id of the editor with message.
func (f *Forwarder) answerError(id json.RawMessage, message string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32603, "message": message}})
	f.write(body)
}

func (f *Forwarder) write(body []byte) {
	f.outMu.Lock()
	defer f.outMu.Unlock()
	_ = server.WriteFrame(f.out, body)
}

// editorWriter writes whole frames to the editor under the forwarder's lock (the frame reader's answers).
type editorWriter struct{ f *Forwarder }

func (w editorWriter) Write(p []byte) (int, error) {
	w.f.outMu.Lock()
	defer w.f.outMu.Unlock()
	return w.f.out.Write(p)
}

// notify sends window/showMessage to the editor (type 1 error, 2 warning).
func (f *Forwarder) notify(typ int, text string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "window/showMessage", "params": map[string]any{"type": typ, "message": text}})
	f.write(body)
}

// fail answers the editor's first request with the error that stopped the forwarder.
func (f *Forwarder) fail(first []byte, err error) {
	f.Log.Error("no shared daemon", zap.Error(err))
	if m := peek(first); m.isRequest() {
		f.answerError(m.ID, "Alisio: "+err.Error()+" (or start the editor's server with `alisio-lsp serve --no-shared`)")
	}
}

// refusedError is the owner's refusal to serve this forwarder (see Welcome.Refused).
type refusedError string

func (e refusedError) Error() string { return string(e) }
