// Package server is the alisio daemon: the Language Server Protocol lifecycle and the alisio/* methods over
// a jsonrpc2 stream (go.lsp.dev/jsonrpc2 and go.lsp.dev/protocol), on top of the agent. Handlers are thin:
// they decode, call the agent or the store, and translate the result. Requests run concurrently, each with its
// own cancellable context; notifications run in order on the read loop.
package server

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"go.lsp.dev/uri"
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
	Log     *zap.Logger
	// MaxFrame caps incoming messages (default DefaultMaxFrame).
	MaxFrame int64
	// LargeRequests bounds the large requests handled at once across the connections that share it (the
	// shared daemon's windows); nil: this connection gets its own, of twice MaxFrame.
	LargeRequests *LargeRequests
	// StatusInterval is the least time between two alisio/status notifications (default 100 ms).
	StatusInterval time.Duration
	// Provider tunes the SDK clients.
	Provider provider.Options
	// Version is reported in serverInfo.
	Version string
	// Store, when set, is used instead of opening the data directory's store (tests, benchmarks); the
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
	log  *zap.Logger
	conn jsonrpc2.Conn
	// connCtx ends with the connection; background work runs under it.
	connCtx context.Context

	mu          sync.Mutex
	cfg         config.Config
	initialized bool
	shutdown    bool
	workspace   string
	caps        clientCaps
	store       *storage.Store
	storeErr    error
	// dataDir and dataDirInfo are the private store's data directory as it was opened: once the path no longer
	// leads there (removed), nothing more can be saved and the daemon leaves (see checkDataDirLocked).
	dataDir     string
	dataDirInfo os.FileInfo
	ag          *agent.Agent
	retired     *agent.Agent // replaced by a provider change; the next agent takes over its MCP servers
	agErr       error
	// settingsErr is why the editor's latest settings were refused (nil once valid ones arrive): a prompt that
	// fails for want of a provider names it, since the provider it sets is then not in force.
	settingsErr error
	shared      *workspace // the folder's state shared with the other connections on it
	files       *relevantfiles.Tracker
	compacting  map[string]bool
	progress    map[string]*progress

	inflightMu sync.Mutex
	inflight   map[string]context.CancelFunc

	status *statusSender
	exit   chan int
	// readLane bounds the bulk reads running or replying at once (enterLane).
	readLane chan struct{}
	// background counts the request and notification goroutines still running (drained before the store
	// closes).
	background sync.WaitGroup
	once       sync.Once
}

type clientCaps struct {
	configuration, workDoneProgress, watchedFilesRegistration bool
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
	if opts.LargeRequests == nil {
		opts.LargeRequests = NewLargeRequests(2 * cmp.Or(opts.MaxFrame, DefaultMaxFrame))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &Server{opts: opts, log: opts.Log, connCtx: ctx, cfg: opts.Config, files: relevantfiles.NewTracker(),
		compacting: map[string]bool{}, progress: map[string]*progress{}, inflight: map[string]context.CancelFunc{}, exit: make(chan int, 1),
		readLane: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)-1))}
	st := newStream(rwc, opts.MaxFrame, func(reason string) { s.log.Warn("bad input from the client", zap.String("reason", reason)) })
	s.conn = jsonrpc2.NewConn(st)
	s.status = newStatusSender(ctx, opts.StatusInterval, s.sendStatus)
	s.join()
	defer s.leave()
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

// goBackground runs f on its own goroutine, counted so that drain waits for it.
func (s *Server) goBackground(f func()) {
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		f()
	}()
}

// drain stops the status sender and waits for the background goroutines, so that nothing is reading or writing
// the store when it is closed.
func (s *Server) drain() {
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
	defer s.mu.Unlock()
	if s.shared != nil {
		s.shared.leave()
		s.shared = nil
	}
	if s.ag != nil && s.ag.Tools != nil {
		_ = s.ag.Close()
	}
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
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer func() {
			s.inflightMu.Lock()
			delete(s.inflight, key)
			s.inflightMu.Unlock()
			cancel()
		}()
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
		if rerr := reply(context.WithoutCancel(ctx), result, rpcError(err)); rerr != nil {
			s.log.Warn("replying", zap.String("method", call.Method()), zap.Error(rerr))
		}
	}()
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
	leaveLarge, err := s.opts.LargeRequests.enter(ctx, len(call.Params()))
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

// rpcError gives every error a proper JSON-RPC code: jsonrpc2 errors keep theirs, invalid params get
// -32602, anything else is a failed request (-32803) with its message.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	var pe *paramsError
	if errors.As(err, &pe) {
		return &jsonrpc2.Error{Code: jsonrpc2.InvalidParams, Message: pe.Error()}
	}
	return &jsonrpc2.Error{Code: codeRequestFailed, Message: err.Error()}
}

// paramsError is a request whose params do not decode or lack a required field.
type paramsError struct{ msg string }

// Error is the message of the -32602 reply.
func (e *paramsError) Error() string { return "invalid params: " + e.msg }

// decode reads params into v, refusing unknown fields.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &paramsError{err.Error()}
	}
	return nil
}

func idKey(id jsonrpc2.ID) string {
	b, _ := json.Marshal(&id)
	return string(b)
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

// notification handles client notifications in order.
func (s *Server) notification(ctx context.Context, req jsonrpc2.Request) {
	s.mu.Lock()
	initialized := s.initialized
	s.mu.Unlock()
	if !initialized {
		return // LSP: notifications before initialize are dropped
	}
	switch req.Method() {
	case "initialized":
		if s.caps.configuration {
			s.goBackground(s.pullConfiguration)
		}
		s.goBackground(s.announceStatus)
	case "workspace/didChangeConfiguration":
		var p struct {
			Settings json.RawMessage `json:"settings"`
		}
		_ = json.Unmarshal(req.Params(), &p)
		if s.caps.configuration {
			s.goBackground(s.pullConfiguration)
			return
		}
		s.applySettings(p.Settings, "workspace/didChangeConfiguration")
	case "workspace/didChangeWatchedFiles":
		var p protocol.DidChangeWatchedFilesParams
		if json.Unmarshal(req.Params(), &p) != nil {
			return
		}
		for _, ch := range p.Changes {
			rel := s.relPath(uriPath(string(ch.URI)))
			if rel == "" {
				continue
			}
			if ch.Type == protocol.FileChangeTypeDeleted {
				s.files.Removed(rel)
			} else {
				s.files.Note(rel, relevantfiles.Changed)
			}
		}
	default:
		s.log.Debug("ignored notification", zap.String("method", req.Method()))
	}
}

type initializeParams struct {
	RootURI               string                     `json:"rootUri"`
	RootPath              string                     `json:"rootPath"`
	WorkspaceFolders      []protocol.WorkspaceFolder `json:"workspaceFolders"`
	InitializationOptions json.RawMessage            `json:"initializationOptions"`
	Capabilities          struct {
		Workspace struct {
			Configuration         bool `json:"configuration"`
			DidChangeWatchedFiles struct {
				DynamicRegistration bool `json:"dynamicRegistration"`
			} `json:"didChangeWatchedFiles"`
		} `json:"workspace"`
		Window struct {
			WorkDoneProgress bool `json:"workDoneProgress"`
		} `json:"window"`
	} `json:"capabilities"`
}

func (s *Server) initialize(_ context.Context, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := json.Unmarshal(nonNull(params), &p); err != nil {
		return nil, &paramsError{err.Error()}
	}
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, &jsonrpc2.Error{Code: jsonrpc2.InvalidRequest, Message: "initialize was already received"}
	}
	s.caps = clientCaps{configuration: p.Capabilities.Workspace.Configuration, workDoneProgress: p.Capabilities.Window.WorkDoneProgress,
		watchedFilesRegistration: p.Capabilities.Workspace.DidChangeWatchedFiles.DynamicRegistration}
	s.workspace = workspaceRoot(p)
	// Windows on the same folder share its relevant files and one watcher.
	s.shared = joinWorkspace(s.workspace)
	s.files = s.shared.files
	s.mu.Unlock()
	if err := s.opts.ConfigProblem; err != nil {
		go s.showMessage(protocol.MessageTypeError, "Alisio: "+err.Error()+". Alisio runs with the default settings and your editor's alisio settings; "+
			"fix the file, then restart the server (Alisio: Restart Server in VS Code, :AlisioRestart in Neovim).")
	}
	s.applySettings(p.InitializationOptions, "initializationOptions")
	s.openStore()
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
	if s.workspace != "" {
		s.goBackground(s.watch)
	}
	return map[string]any{
		"capabilities": map[string]any{
			"experimental": map[string]any{"alisio": map[string]any{"protocolVersion": 1, "methods": methodNames(),
				"notifications": []string{"alisio/event", "alisio/status"}}},
		},
		"serverInfo": map[string]any{"name": "alisio-lsp", "version": s.opts.Version},
	}, nil
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
}

// workspaceRoot is the folder the editor opened: its first workspace folder, else its root; "" when it named
// none.
func workspaceRoot(p initializeParams) string {
	for _, f := range p.WorkspaceFolders {
		if path := uriPath(f.URI); path != "" {
			return path
		}
	}
	if path := uriPath(p.RootURI); path != "" {
		return path
	}
	return p.RootPath
}

// errNoWorkspace answers what needs the agent when the editor named no workspace folder (an empty VS Code
// window): the agent's tools act only inside one, never in whatever directory the daemon was started from.
var errNoWorkspace = errors.New("no workspace folder is open: open your project's folder (File > Open Folder… in VS Code, " +
	"a file of the project in Neovim); the agent works only inside it")

// uriPath is the file path of a file:// URI ("" for anything else), drive letters included on Windows
// (file:///C:/src → C:\src).
func uriPath(u string) string {
	parsed, err := url.Parse(u)
	if err != nil || parsed.Scheme != "file" {
		return ""
	}
	name := uri.URI(u).Filename()
	if name == "" {
		return "" // "file://": no path, not the current directory
	}
	p := filepath.Clean(filepath.FromSlash(name))
	if len(p) >= 2 && p[1] == ':' { // VS Code writes drive letters in lower case (file:///c%3A/src)
		p = strings.ToUpper(p[:1]) + p[1:]
	}
	return p
}

func (s *Server) relPath(abs string) string {
	s.mu.Lock()
	root := s.workspace
	s.mu.Unlock()
	if abs == "" || root == "" {
		return ""
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return filepath.ToSlash(rel)
}

// openStore opens the session store; a store locked by another daemon is remembered and reported by every
// session method, never a hang.
func (s *Server) openStore() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.Store != nil {
		s.store = s.opts.Store
		return
	}
	override := s.opts.DataDir
	if override == "" {
		override = s.cfg.DataDir
	}
	dir, err := storage.DataDir(override)
	if err == nil {
		s.store, err = storage.OpenDataDir(dir, storage.DefaultOptions("").WithLogger(s.log))
	}
	if err != nil {
		s.storeErr = err
		s.log.Warn("the session store is unavailable", zap.Error(err))
		go s.showMessage(protocol.MessageTypeWarning, "Alisio: "+err.Error())
		return
	}
	if s.dataDirInfo, err = os.Stat(dir); err == nil {
		s.dataDir = dir
		s.goBackground(s.watchDataDir)
	}
}

// dataDirCheck is how often a private daemon checks that its data directory is still there.
const dataDirCheck = time.Second

// watchDataDir checks the private store's data directory until the connection ends.
func (s *Server) watchDataDir() {
	tick := time.NewTicker(dataDirCheck)
	defer tick.Stop()
	for {
		select {
		case <-s.connCtx.Done():
			return
		case <-tick.C:
			s.mu.Lock()
			err := s.checkDataDirLocked()
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}
}

// checkDataDirLocked fails once the private store's data directory was removed (or replaced): the store's
// files are gone with it, so every later request is refused, the editor is told, and the daemon leaves
// without closing the store (Badger would retry its flush into the removed directory forever).
func (s *Server) checkDataDirLocked() error {
	if s.dataDirInfo == nil || s.storeErr != nil {
		return s.storeErr
	}
	if now, err := os.Stat(s.dataDir); err == nil && os.SameFile(now, s.dataDirInfo) {
		return nil
	}
	s.storeErr = fmt.Errorf("the data directory %s was removed while Alisio ran, so nothing more can be saved there: "+
		"restart Alisio (Alisio: Restart Server in VS Code, :AlisioRestart in Neovim) to start with a new one", s.dataDir)
	s.log.Error("the data directory was removed; leaving without closing the store", zap.String("dataDir", s.dataDir))
	s.store = nil // its files are gone: never closed, never written again
	msg := "Alisio: " + s.storeErr.Error()
	s.goBackground(func() { s.showMessage(protocol.MessageTypeError, msg) })
	select {
	case s.exit <- 1:
	default:
	}
	return s.storeErr
}

// applySettings layers the editor's alisio settings over the config file; an invalid value is shown to the
// user and the previous valid configuration stays.
func (s *Server) applySettings(raw json.RawMessage, source string) {
	raw = nonNull(raw)
	var wrapped map[string]json.RawMessage
	if json.Unmarshal(raw, &wrapped) == nil {
		if inner, ok := wrapped["alisio"]; ok {
			raw = nonNull(inner)
		}
	}
	s.mu.Lock()
	next, err := config.Overlay(s.opts.Config, raw, "alisio settings ("+source+")")
	if err == nil {
		oldProvider, _ := s.cfg.ActiveProvider()
		newProvider, _ := next.ActiveProvider()
		mcpChanged := !reflect.DeepEqual(s.cfg.MCPServers, next.MCPServers)
		s.cfg = next
		switch {
		case s.ag != nil && oldProvider == newProvider:
			s.ag.SetSettings(next) // running turns see it at their next model call
			if mcpChanged {
				ag := s.ag
				s.goBackground(func() { // enabling or disabling MCP servers applies live
					ag.SyncMCP(s.connCtx, next)
					s.status.touchAll()
				})
			}
		case s.ag != nil:
			// A new provider: the agent is rebuilt at its next use, taking over the MCP servers. A turn still
			// running on the old one finishes with it; its workspace handle is closed by the os.Root
			// finalizer once unreachable.
			s.retired, s.ag = s.ag, nil
		}
		s.agErr = nil
	}
	s.settingsErr = err
	s.mu.Unlock()
	if err != nil {
		s.log.Warn("invalid settings", zap.Error(err))
		go s.showMessage(protocol.MessageTypeError, "Alisio: "+err.Error()+". The previous settings stay in force.")
		return
	}
	s.status.touchAll()
}

// announceStatus sends the meter of the workspace's most recent session, so that the editor shows it at once.
func (s *Server) announceStatus() {
	st, _, err := s.storeAndAgent()
	if err != nil {
		return
	}
	if list, err := st.Sessions(s.root()); err == nil && len(list) > 0 {
		s.status.touch(list[0].ID)
	}
}

// pullConfiguration asks the client for the alisio section (workspace/configuration).
func (s *Server) pullConfiguration() {
	var result []json.RawMessage
	ctx, cancel := context.WithTimeout(s.connCtx, 10*time.Second)
	defer cancel()
	_, err := s.conn.Call(ctx, "workspace/configuration", &protocol.ConfigurationParams{Items: []protocol.ConfigurationItem{{Section: "alisio"}}}, &result)
	if err != nil {
		s.log.Warn("workspace/configuration failed", zap.Error(err))
		return
	}
	if len(result) > 0 {
		s.applySettings(result[0], "workspace/configuration")
	}
}

func (s *Server) showMessage(typ protocol.MessageType, msg string) {
	_ = s.conn.Notify(s.connCtx, "window/showMessage", &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// watch starts the workspace watcher; when the system's watch limit is reached it falls back to the client's
// watching (workspace/didChangeWatchedFiles) if the client can register it.
func (s *Server) watch() {
	s.mu.Lock()
	ws := s.shared
	s.mu.Unlock()
	if err := ws.watch(s.log); err != nil {
		s.log.Warn("the workspace watcher is limited; asking the editor to report file changes instead", zap.Error(err))
		if s.caps.watchedFilesRegistration {
			_, _ = s.conn.Call(s.connCtx, "client/registerCapability", map[string]any{"registrations": []any{map[string]any{
				"id": "alisio-watch", "method": "workspace/didChangeWatchedFiles",
				"registerOptions": map[string]any{"watchers": []any{map[string]any{"globPattern": "**/*"}}}}}}, nil)
		}
	}
}

// session returns the store and the agent for the current settings, building the agent when needed.
func (s *Server) agentFor() (*agent.Agent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkDataDirLocked(); err != nil {
		return nil, err
	}
	if s.ag != nil || s.agErr != nil {
		return s.ag, s.agErr
	}
	s.ag, s.agErr = s.buildAgentLocked()
	if s.ag != nil {
		s.ag.OnEvent = s.onAgentEvent
	}
	return s.ag, s.agErr
}

// buildAgentLocked builds the agent; without a configured provider it still serves compaction (offline
// summarizer) and status, and prompts fail with directions.
func (s *Server) buildAgentLocked() (*agent.Agent, error) {
	if s.workspace == "" {
		return nil, errNoWorkspace
	}
	p, _ := s.cfg.ActiveProvider()
	if p.Kind == "" {
		a, err := agent.NewContextOnly(s.store, s.cfg, s.workspace, s.files)
		if err == nil {
			s.startMCP(s.connCtx, a)
		}
		return a, err
	}
	ctx, cancel := context.WithTimeout(s.connCtx, 15*time.Second)
	defer cancel()
	a, err := agent.New(ctx, s.store, s.cfg, s.workspace, s.log, s.opts.Provider)
	if err != nil {
		return nil, err
	}
	a.UseFiles(s.files)
	s.startMCP(ctx, a)
	return a, nil
}

// startMCP gives a new agent the MCP servers: those of the agent it replaces, then what the settings add.
func (s *Server) startMCP(ctx context.Context, a *agent.Agent) {
	if s.retired != nil {
		a.AdoptMCP(s.retired)
		s.retired = nil
	}
	a.SyncMCP(ctx, s.cfg)
}

// explainNoProvider names the settings that were refused when err is the want of a provider: the provider
// they set is not in force, and "no provider is configured" alone would hide why.
func (s *Server) explainNoProvider(err error) error {
	if !errors.Is(err, agent.ErrNoProvider) {
		return err
	}
	s.mu.Lock()
	refused := s.settingsErr
	s.mu.Unlock()
	if refused == nil {
		refused = s.opts.ConfigProblem
	}
	if refused == nil {
		return err
	}
	return fmt.Errorf("the Alisio settings were not applied, so the provider they set is not in force: %v. Fix that setting and send the prompt again", refused)
}
