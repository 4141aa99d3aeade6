package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"go.lsp.dev/uri"
)

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
		Experimental struct {
			Alisio struct {
				// Approve: "request" or "notification" when the client answers approval questions.
				Approve string `json:"approve"`
				// Editor: "vscode" or "neovim", the editor whose words messages use (api.WordsFor).
				Editor string `json:"editor"`
			} `json:"alisio"`
		} `json:"experimental"`
	} `json:"capabilities"`
}

// words are those of the client's editor (before initialize, or for a client that does not say: both
// editors').
func (s *Server) words() api.Words {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps.words.Compact == "" {
		return api.EditorWords()
	}
	return s.caps.words
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
	if a := p.Capabilities.Experimental.Alisio.Approve; a == approveByRequest || a == approveByNotification {
		s.caps.approve = a
	}
	s.caps.words = api.WordsFor(p.Capabilities.Experimental.Alisio.Editor)
	s.workspace = workspaceRoot(p)
	// Windows on the same folder share its relevant files and one watcher.
	s.shared = s.hub.joinWorkspace(s.workspace)
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
	alisio := map[string]any{"protocolVersion": api.ProtocolVersion, "methods": methodNames(), "notifications": []string{"alisio/event", "alisio/status"}}
	if s.opts.LogFile != "" {
		alisio["logFile"] = s.opts.LogFile
	}
	return map[string]any{
		"capabilities": map[string]any{"experimental": map[string]any{"alisio": alisio}},
		"serverInfo":   map[string]any{"name": "alisio-lsp", "version": s.opts.Version},
	}, nil
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
	if filepath.IsAbs(p.RootPath) {
		return p.RootPath
	}
	return ""
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
	if !filepath.IsAbs(p) {
		return "" // file://. is no folder of the editor's: the daemon's own directory would stand in for it
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

// announceStatus sends the meter of the workspace's most recent session, so that the editor shows it at once.
func (s *Server) announceStatus() {
	ag, err := s.agentFor(s.connCtx)
	if err != nil {
		return
	}
	if list, err := ag.Store.Sessions(s.root()); err == nil && len(list) > 0 {
		s.status.touch(list[0].ID)
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
