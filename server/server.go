// Package server is the alisio daemon: the Language Server Protocol lifecycle and the alisio/* methods over
// a jsonrpc2 stream (go.lsp.dev/jsonrpc2 and go.lsp.dev/protocol), on top of the agent. Handlers are thin:
// they decode, call the agent or the store, and translate the result. Requests run concurrently, each with its
// own cancellable context; notifications run in order on the read loop.
package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// Options configure the daemon.
type Options struct {
	// Config is the configuration from the config file; editor settings are layered over it.
	Config config.Config
	// ConfigProblem is why the config file could not be used (Config then holds the defaults); it is shown to
	// the user once the editor is connected.
	ConfigProblem error
	// DataDir overrides the data directory (--data-dir); empty: alisio.dataDir, then the per-user default.
	DataDir string
	// LogFile is the file Log writes to (empty: stderr); the initialize result names it, for the editors'
	// commands that open the log.
	LogFile string
	Log     *zap.Logger
	// MaxFrame caps incoming messages (default DefaultMaxFrame).
	MaxFrame int64
	// Hub is what this connection shares with the others of the daemon (the shared daemon's windows); nil:
	// one of its own.
	Hub *Hub
	// StatusInterval is the least time between two alisio/status notifications (default 100 ms).
	StatusInterval time.Duration
	// Provider tunes the SDK clients.
	Provider provider.Options
	// Version is reported in serverInfo.
	Version string
	// Store, when set, is used instead of opening the data directory's store (the shared daemon's, which every
	// window uses; tests and benchmarks); the
	// daemon does not close it.
	Store *storage.Store
}

// Error codes of failed requests (LSP's reserved range).
const (
	codeServerNotInitialized jsonrpc2.Code = -32002
	codeRequestFailed        jsonrpc2.Code = -32803
	codeRequestCancelled     jsonrpc2.Code = -32800
)

// Server is one daemon connection.
type Server struct {
	opts Options
	hub  *Hub
	log  *zap.Logger
	conn jsonrpc2.Conn
	// connCtx ends with the connection; background work runs under it.
	connCtx context.Context

	// mu guards the connection's lifecycle (lifecycle.go): what initialize and shutdown set.
	mu          sync.Mutex
	initialized bool
	shutdown    bool
	workspace   string
	caps        clientCaps
	shared      *workspace // the folder's state shared with the other connections on it
	files       *relevantfiles.Tracker

	// settingsMu guards the settings in force and why the latest were refused (settings.go).
	settingsMu sync.Mutex
	cfg        config.Config
	// settingsErr is why the editor's latest settings were refused (nil once valid ones arrive): a prompt that
	// fails for want of a provider names it, since the provider it sets is then not in force.
	settingsErr error

	// storeMu guards the session store (datadir.go).
	storeMu  sync.Mutex
	store    *storage.Store
	storeErr error
	// dataDir and dataDirInfo are the private store's data directory as it was opened: once the path no longer
	// leads there (removed), nothing more can be saved and the daemon leaves (see checkDataDirLocked).
	dataDir     string
	dataDirInfo os.FileInfo

	// agents is the connection's agent, built outside every other lock (agentslot.go).
	agents agentSlot

	// progressMu guards the compactions under way and the progress reports (status.go).
	progressMu sync.Mutex
	compacting map[string]bool
	progress   map[string]*progress

	// approvals are the approval questions waiting for the editor's answer (approval.go).
	approvals approvals

	inflightMu sync.Mutex
	inflight   map[string]context.CancelFunc

	status *statusSender
	exit   chan int
	// readLane bounds the bulk reads running or replying at once (enterLane).
	readLane chan struct{}
	// background counts the request and notification goroutines still running (drained before the store
	// closes); backgroundMu orders every Add before drain's Wait, and draining refuses new ones after it.
	background   sync.WaitGroup
	backgroundMu sync.Mutex
	draining     bool
	once         sync.Once
}

type clientCaps struct {
	configuration, workDoneProgress, watchedFilesRegistration bool
	// approve is how the client answers approval questions: approveByRequest, approveByNotification, or ""
	// (it does not).
	approve string
	// words name what the client's user can do (its editor's commands and settings).
	words api.Words
}

// Serve runs the daemon on rwc until the client sends exit or the stream ends, and returns the process exit
// code: 0 after shutdown then exit, 1 otherwise (LSP).
func Serve(ctx context.Context, rwc io.ReadWriteCloser, opts Options) int {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.StatusInterval <= 0 {
		opts.StatusInterval = 100 * time.Millisecond
	}
	if opts.Hub == nil {
		opts.Hub = NewHub(opts.MaxFrame)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &Server{opts: opts, hub: opts.Hub, log: opts.Log, connCtx: ctx, cfg: opts.Config, files: relevantfiles.NewTracker(),
		compacting: map[string]bool{}, progress: map[string]*progress{}, inflight: map[string]context.CancelFunc{}, exit: make(chan int, 1),
		readLane: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))}
	st := newStream(rwc, opts.MaxFrame, func(reason string) { s.log.Warn("bad input from the client", zap.String("reason", reason)) })
	s.conn = jsonrpc2.NewConn(st)
	s.status = newStatusSender(ctx, opts.StatusInterval, s.sendStatus)
	s.hub.join(s)
	defer s.hub.leave(s)
	s.conn.Go(ctx, s.handle)
	code := 1
	select {
	case code = <-s.exit:
	case <-s.conn.Done():
		s.mu.Lock()
		if s.shutdown {
			code = 0
		}
		s.mu.Unlock()
		s.log.Info("the client closed the connection", zap.Error(s.conn.Err()))
	case <-ctx.Done():
	}
	cancel()
	s.cancelAll()
	s.drain()
	s.close()
	_ = s.conn.Close()
	return code
}

// drainTimeout bounds the wait for cancelled requests to return before the store is closed; one that does
// not return in time then gets storage.ErrClosed from any later store call instead of a crash.
const drainTimeout = 10 * time.Second

// goBackground runs f on its own goroutine, counted so that drain waits for it. Once drain has begun it runs
// nothing and returns false: the store is about to close.
func (s *Server) goBackground(f func()) bool {
	s.backgroundMu.Lock()
	defer s.backgroundMu.Unlock()
	if s.draining {
		return false
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		f()
	}()
	return true
}

// errStopping answers a request that arrives after the daemon began to stop.
var errStopping = &jsonrpc2.Error{Code: jsonrpc2.InvalidRequest, Message: "the daemon is stopping: the request was not run; send it again once it has restarted"}

// drain stops the status sender and waits for the background goroutines, so that nothing is reading or writing
// the store when it is closed.
func (s *Server) drain() {
	s.backgroundMu.Lock()
	s.draining = true
	s.backgroundMu.Unlock()
	s.status.stop()
	done := make(chan struct{})
	go func() {
		s.background.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainTimeout):
		s.log.Warn("requests still running at exit; closing the store anyway", zap.Duration("waited", drainTimeout))
	}
}

func (s *Server) close() {
	s.mu.Lock()
	if s.shared != nil {
		s.shared.leave()
		s.shared = nil
	}
	s.mu.Unlock()
	s.agents.close()
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if s.store != nil && s.opts.Store == nil {
		if err := s.store.Close(); err != nil {
			s.log.Warn("closing the session store", zap.Error(err))
		}
		s.store = nil
	}
}

// handle is the outermost handler: it never returns an error (that would fail the connection) and runs
// requests off the read loop so that a long prompt never blocks status, cancellation or shutdown.
func (s *Server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case "$/cancelRequest":
		s.cancelRequest(req.Params())
		return nil
	case "exit":
		s.mu.Lock()
		code := 1
		if s.shutdown {
			code = 0
		}
		s.mu.Unlock()
		s.once.Do(func() { s.exit <- code })
		return nil
	}
	call, ok := req.(*jsonrpc2.Call)
	if !ok {
		s.notification(ctx, req)
		return nil
	}
	key := idKey(call.ID())
	rctx, cancel := context.WithCancel(s.connCtx)
	s.inflightMu.Lock()
	s.inflight[key] = cancel
	s.inflightMu.Unlock()
	// finish forgets the request once it is answered, whether it ran or not.
	finish := func() {
		s.inflightMu.Lock()
		delete(s.inflight, key)
		s.inflightMu.Unlock()
		cancel()
	}
	run := func() {
		defer finish()
		started := time.Now()
		var result any
		leave, err := s.enterLane(rctx, call)
		if err == nil {
			defer leave()
			result, err = s.safeCall(rctx, call)
		}
		s.log.Debug("request", zap.String("method", call.Method()), zap.Duration("took", time.Since(started)), zap.Error(err))
		if err != nil && rctx.Err() != nil && s.connCtx.Err() == nil {
			err = &jsonrpc2.Error{Code: codeRequestCancelled, Message: "request cancelled: " + err.Error()}
		}
		// Reply even when the request's context was cancelled (a cancelled context drops the reply).
		if rerr := reply(context.WithoutCancel(ctx), result, s.rpcError(err)); rerr != nil {
			s.log.Warn("replying", zap.String("method", call.Method()), zap.Error(rerr))
		}
	}
	if !s.goBackground(run) {
		finish()
		_ = reply(context.WithoutCancel(ctx), nil, errStopping)
	}
	return nil
}

// bulkReads are the requests that decode and encode whole transcripts: CPU work that gains nothing from
// running more of them at once than there are cores, and that would then delay everything else.
var bulkReads = map[string]bool{"alisio/session": true, "alisio/checkpoint": true, "alisio/sessions": true, "alisio/context": true}

// enterLane lets a request start: a large one once the LargeRequests limit allows it, and a bulk read
// through the read lane, at most GOMAXPROCS-1 of them at once (at least one), so that a flood of them leaves a
// core for the meter (alisio/status), cancellation and the rest. leave is called once the request's reply is
// written: the connection writes one reply at a time, and a bulk reply is large, so one that waited there
// outside the lane would hold every status reply behind the bulk replies queued before it. A request
// cancelled while it waits is answered as cancelled.
func (s *Server) enterLane(ctx context.Context, call *jsonrpc2.Call) (leave func(), err error) {
	leaveLarge, err := s.hub.large.enter(ctx, len(call.Params()))
	if err != nil {
		return nil, err
	}
	if !bulkReads[call.Method()] {
		return leaveLarge, nil
	}
	select {
	case s.readLane <- struct{}{}:
		return func() { <-s.readLane; leaveLarge() }, nil
	case <-ctx.Done():
		leaveLarge()
		return nil, ctx.Err()
	}
}

// safeCall dispatches call and turns a panic into an internal error reply.
func (s *Server) safeCall(ctx context.Context, call *jsonrpc2.Call) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in a handler", zap.String("method", call.Method()), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			result, err = nil, &jsonrpc2.Error{Code: jsonrpc2.InternalError, Message: fmt.Sprintf("internal error in %s: %v (see the daemon log)", call.Method(), p)}
		}
	}()
	s.mu.Lock()
	initialized, shut := s.initialized, s.shutdown
	s.mu.Unlock()
	method := call.Method()
	switch {
	case method == "initialize":
		return s.initialize(ctx, call.Params())
	case !initialized:
		return nil, &jsonrpc2.Error{Code: codeServerNotInitialized, Message: "the server is not initialized: send initialize first"}
	case method == "shutdown":
		s.mu.Lock()
		s.shutdown = true
		s.mu.Unlock()
		return nil, nil
	case shut:
		return nil, &jsonrpc2.Error{Code: jsonrpc2.InvalidRequest, Message: "the server is shutting down: only exit is accepted"}
	}
	if h, ok := methods[method]; ok {
		return h(s, ctx, call.Params())
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.MethodNotFound, Message: "method not found: " + method}
}

// cancelRequest cancels an in-flight request; numeric and string IDs both work (go.lsp.dev's own handler
// ignores the numeric IDs editors send).
func (s *Server) cancelRequest(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.ID) == 0 {
		return
	}
	key := string(p.ID)
	if n, err := strconv.ParseFloat(key, 64); err == nil {
		key = strconv.FormatInt(int64(n), 10)
	}
	s.inflightMu.Lock()
	cancel, ok := s.inflight[key]
	s.inflightMu.Unlock()
	if ok {
		cancel()
	}
}

func (s *Server) cancelAll() {
	s.inflightMu.Lock()
	defer s.inflightMu.Unlock()
	for _, c := range s.inflight {
		c()
	}
}
