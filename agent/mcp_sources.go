package agent

import (
	"context"
	"reflect"
	"sort"
	"sync"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/mcp"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// mcpConn is one configured MCP server as the agent runs it.
type mcpConn struct {
	cfg    config.MCPServer
	source tools.Source
	server *mcp.Server // nil when it failed to start
}

// SyncMCP makes the catalog's MCP sources match cfg.MCPServers: new or changed servers are started, removed
// or disabled ones stopped, unchanged ones kept. A server that cannot start stays in the catalog as a source
// with no tools that says why (alisio/tools). The catalog's size is updated for the meter (TC1).
func (a *Agent) SyncMCP(ctx context.Context, cfg config.Config) {
	a.mcpMu.Lock()
	defer a.mcpMu.Unlock()
	next := map[string]mcpConn{}
	var start []string
	for name, sc := range cfg.MCPServers {
		if sc.Disabled {
			continue
		}
		if cur, ok := a.mcp[name]; ok && reflect.DeepEqual(cur.cfg, sc) {
			next[name] = cur
			continue
		}
		start = append(start, name)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, name := range start {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := cfg.MCPServers[name]
			conn := mcpConn{cfg: sc}
			srv, err := mcp.Connect(ctx, name, sc, a.Tools.Dir())
			if err != nil {
				a.Log.Warn("MCP server not started", zap.String("server", name), zap.Error(err))
				conn.source = mcp.Failed{ServerName: name, Err: err}
			} else {
				for _, w := range srv.Warnings {
					a.Log.Warn("MCP tool left out", zap.String("server", name), zap.String("why", w))
				}
				conn.source, conn.server = srv, srv
			}
			mu.Lock()
			next[name] = conn
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, cur := range a.mcp {
		if next[name].server != cur.server && cur.server != nil {
			_ = cur.server.Close()
		}
	}
	a.mcp = next
	names := make([]string, 0, len(next))
	for n := range next {
		names = append(names, n)
	}
	sort.Strings(names)
	sources := make([]tools.Source, len(names))
	for i, n := range names {
		sources[i] = next[n].source
	}
	a.Tools.SetSources(sources)
	a.SetToolsChars(a.Tools.CatalogChars())
}

// AdoptMCP takes over old's MCP servers, so that an agent rebuilt for new settings keeps them running (old
// keeps using them for a turn it is finishing); SyncMCP then matches the new settings.
func (a *Agent) AdoptMCP(old *Agent) {
	old.mcpMu.Lock()
	conns := old.mcp
	old.mcp = nil
	old.mcpMu.Unlock()
	a.mcpMu.Lock()
	a.mcp = conns
	a.mcpMu.Unlock()
}

// Close stops the agent's MCP servers and background summaries, and releases its workspace.
func (a *Agent) Close() error {
	a.discardAllAhead()
	a.mcpMu.Lock()
	for _, c := range a.mcp {
		if c.server != nil {
			_ = c.server.Close()
		}
	}
	a.mcp = nil
	a.mcpMu.Unlock()
	return a.Tools.Close()
}
