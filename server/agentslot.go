package server

import (
	"context"
	"reflect"
	"sync"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// agentSlot is the connection's agent. It is built at its first use, and again after a provider change,
// outside every other lock of the connection: a build asks the provider for its model list (up to
// agentBuildTimeout) and starts MCP servers, and nothing else — a notification, a cancellation, the meter —
// may wait for that. One build runs at a time; a request waiting for it can be cancelled.
type agentSlot struct {
	// mu guards the fields below; it is never held during a build.
	mu  sync.Mutex
	ag  *agent.Agent
	err error
	// retired is the agent a provider change replaced; the next agent takes over its MCP servers.
	retired *agent.Agent
	// gen counts provider changes: a build that started before the latest one is not used.
	gen uint64
	// building is closed when the build under way ends (nil: none).
	building chan struct{}
}

// agentBuildTimeout bounds a build's questions to the provider.
const agentBuildTimeout = 15 * time.Second

// agentFor returns the agent for the current settings, building it when needed; ctx ends the wait (not the
// build, which later requests then use).
func (s *Server) agentFor(ctx context.Context) (*agent.Agent, error) {
	if err := s.checkDataDir(); err != nil {
		return nil, err
	}
	slot := &s.agents
	for {
		slot.mu.Lock()
		if slot.ag != nil || slot.err != nil {
			ag, err := slot.ag, slot.err
			slot.mu.Unlock()
			return ag, err
		}
		done := slot.building
		if done == nil {
			done = make(chan struct{})
			slot.building = done
			gen := slot.gen
			if !s.goBackground(func() { s.buildAgent(gen, done) }) {
				slot.building = nil
				slot.mu.Unlock()
				return nil, errStopping
			}
		}
		slot.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// buildAgent builds the agent for the settings in force and puts it in the slot unless the provider changed
// meanwhile (gen); done is closed at the end. Without a configured provider the agent still serves compaction
// (offline summarizer) and status, and prompts fail with directions.
func (s *Server) buildAgent(gen uint64, done chan struct{}) {
	slot := &s.agents
	defer close(done)
	cfg := s.settings()
	s.mu.Lock()
	workspace, files := s.workspace, s.files
	s.mu.Unlock()
	var ag *agent.Agent
	var err error
	ctx, cancel := context.WithTimeout(s.connCtx, agentBuildTimeout)
	defer cancel()
	switch p, _ := cfg.ActiveProvider(); {
	case workspace == "":
		err = errNoWorkspace
	case p.Kind == "":
		ag, err = agent.NewContextOnly(s.hub.agents, s.currentStore(), cfg, workspace, files)
	default:
		if ag, err = agent.New(ctx, s.hub.agents, s.currentStore(), cfg, workspace, s.log, s.opts.Provider); err == nil {
			ag.UseFiles(files)
		}
	}
	if ag != nil {
		slot.mu.Lock()
		retired := slot.retired
		slot.retired = nil
		slot.mu.Unlock()
		if retired != nil {
			ag.AdoptMCP(retired)
		}
		ag.SyncMCP(ctx, cfg)
		ag.OnEvent = s.onAgentEvent
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.building = nil
	if slot.gen != gen {
		// The provider changed during the build: this agent's MCP servers go to the next one.
		if ag != nil {
			slot.retire(ag)
		}
		return
	}
	slot.ag, slot.err = ag, err
	if now := s.settings(); ag != nil && !reflect.DeepEqual(now, cfg) {
		// Settings that kept the provider arrived during the build.
		s.applyToAgent(ag, now, !reflect.DeepEqual(now.MCPServers, cfg.MCPServers))
	}
}

// retire keeps ag for the next agent to take over its MCP servers. The caller holds mu.
func (slot *agentSlot) retire(ag *agent.Agent) { slot.retired = ag }

// settingsChanged applies new settings to the agent: a new provider (or an agent that could not be built)
// means a new agent at the next use, taking over the MCP servers; otherwise the running agent takes them live.
// A turn still running on a replaced agent finishes with it.
func (slot *agentSlot) settingsChanged(s *Server, next config.Config, providerChanged, mcpChanged bool) {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	if providerChanged || slot.err != nil {
		slot.gen++
		if slot.ag != nil {
			slot.retire(slot.ag)
		}
		slot.ag, slot.err = nil, nil
		return
	}
	if slot.ag != nil {
		s.applyToAgent(slot.ag, next, mcpChanged)
	}
}

// applyToAgent gives ag new settings of the same provider: running turns see them at their next model call,
// and MCP servers enabled or disabled start or stop in the background.
func (s *Server) applyToAgent(ag *agent.Agent, next config.Config, mcpChanged bool) {
	ag.SetSettings(next)
	if mcpChanged {
		s.goBackground(func() {
			ag.SyncMCP(s.connCtx, next)
			s.status.touchAll()
		})
	}
}

// close closes the agents the slot holds.
func (slot *agentSlot) close() {
	slot.mu.Lock()
	defer slot.mu.Unlock()
	for _, ag := range []*agent.Agent{slot.ag, slot.retired} {
		if ag != nil && ag.Tools != nil {
			_ = ag.Close()
		}
	}
	slot.ag, slot.retired = nil, nil
}
