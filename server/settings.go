package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.lsp.dev/protocol"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/config"
)

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
	s.settingsMu.Lock()
	next, err := config.Overlay(s.opts.Config, raw, "alisio settings ("+source+")")
	prev := s.cfg
	if err == nil {
		s.cfg = next
	}
	s.settingsErr = err
	s.settingsMu.Unlock()
	if err == nil {
		oldProvider, _ := prev.ActiveProvider()
		newProvider, _ := next.ActiveProvider()
		s.agents.settingsChanged(s, next, oldProvider != newProvider, !reflect.DeepEqual(prev.MCPServers, next.MCPServers))
	}
	if err != nil {
		s.log.Warn("invalid settings", zap.Error(err))
		go s.showMessage(protocol.MessageTypeError, "Alisio: "+err.Error()+". The previous settings stay in force.")
		return
	}
	s.status.touchAll()
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

// explainNoProvider names the settings that were refused when err is the want of a provider: the provider
// they set is not in force, and "no provider is configured" alone would hide why.
func (s *Server) explainNoProvider(err error) error {
	if !errors.Is(err, agent.ErrNoProvider) {
		return err
	}
	s.settingsMu.Lock()
	refused := s.settingsErr
	s.settingsMu.Unlock()
	if refused == nil {
		refused = s.opts.ConfigProblem
	}
	if refused == nil {
		return err
	}
	return fmt.Errorf("the Alisio settings were not applied, so the provider they set is not in force: %v. Fix that setting and send the prompt again", refused)
}

// settings is the configuration in force.
func (s *Server) settings() config.Config {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	return s.cfg
}
