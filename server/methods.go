package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

type handlerFunc func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// methods are the custom requests (docs/protocol.md documents each).
var methods = map[string]handlerFunc{
	"alisio/prompt":     (*Server).prompt,
	"alisio/compact":    (*Server).compact,
	"alisio/recover":    (*Server).recoverCalls,
	"alisio/sessions":   (*Server).sessions,
	"alisio/session":    (*Server).session,
	"alisio/newSession": (*Server).newSession,
	"alisio/checkpoint": (*Server).checkpoint,
	"alisio/context":    (*Server).contextParts,
	"alisio/tools":      (*Server).tools,
	"alisio/status":     (*Server).statusRequest,
	"alisio/memories":   (*Server).memories,
}

func methodNames() []string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// storeAndAgent returns what every session method needs, or the reason it is unavailable (for example the
// store locked by another daemon).
func (s *Server) storeAndAgent() (*storage.Store, *agent.Agent, error) {
	ag, err := s.agentFor()
	if err != nil {
		return nil, nil, err
	}
	return ag.Store, ag, nil
}

// begin decodes a method's params into p and returns the store and the agent; when session is not nil, the
// session field it points to is filled with the workspace's most recent session when empty (an error saying
// how to start one when there is none).
func (s *Server) begin(raw json.RawMessage, p any, session *string) (*storage.Store, *agent.Agent, error) {
	if err := decode(raw, p); err != nil {
		return nil, nil, err
	}
	st, ag, err := s.storeAndAgent()
	if err != nil || session == nil || *session != "" {
		return st, ag, err
	}
	if *session, err = s.resolveSession(ag, "", ""); err != nil {
		return nil, nil, err
	}
	return st, ag, nil
}

// root is the workspace root.
func (s *Server) root() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.workspace
}

// resolveSession returns id, or the workspace's most recent session; a non-empty title creates one (so
// titled) when there is none.
func (s *Server) resolveSession(ag *agent.Agent, id string, title string) (string, error) {
	st := ag.Store
	if id != "" {
		if _, err := st.Session(id); err != nil {
			return "", err
		}
		return id, nil
	}
	ws := s.root()
	list, err := st.Sessions(ws)
	if err != nil {
		return "", err
	}
	if len(list) > 0 {
		return list[0].ID, nil
	}
	if title == "" {
		return "", errors.New("this workspace has no session yet: send a prompt first (Alisio: Prompt in VS Code, :AlisioPrompt in Neovim)")
	}
	sess, err := ag.NewSession(title, ws)
	return sess.ID, err
}

type promptParams struct {
	Session       string          `json:"session"`
	Text          string          `json:"text"`
	WorkDoneToken json.RawMessage `json:"workDoneToken"`
}

func (s *Server) prompt(ctx context.Context, raw json.RawMessage) (any, error) {
	var p promptParams
	if err := decode(raw, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Text) == "" {
		return nil, &paramsError{"text is required"}
	}
	_, ag, err := s.storeAndAgent()
	if err != nil {
		return nil, err
	}
	id, err := s.resolveSession(ag, p.Session, agent.SessionTitle(p.Text))
	if err != nil {
		return nil, err
	}
	prog := s.beginProgress(ctx, p.WorkDoneToken, id, "Alisio")
	res, err := ag.Prompt(ctx, id, p.Text)
	s.changed(id)
	if err != nil {
		s.endProgress(id, prog, "failed")
		return nil, s.explainNoProvider(err)
	}
	s.endProgress(id, prog, "done")
	return map[string]any{"session": id, "reply": res.Reply, "modelCalls": res.ModelCalls, "cut": res.Cut}, nil
}

type compactParams struct {
	Session       string          `json:"session"`
	Focus         string          `json:"focus"`
	WorkDoneToken json.RawMessage `json:"workDoneToken"`
}

func (s *Server) compact(ctx context.Context, raw json.RawMessage) (any, error) {
	var p compactParams
	_, ag, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	id, err := s.resolveSession(ag, p.Session, "")
	if err != nil {
		return nil, err
	}
	prog := s.beginProgress(ctx, p.WorkDoneToken, id, "Alisio: compacting")
	emit := func(e compaction.Event) {
		s.onAgentEvent(agent.Event{Session: id, Kind: agent.EventCompaction, Compaction: e})
	}
	res, err := ag.Compact(ctx, id, p.Focus, emit)
	s.changed(id)
	if err != nil {
		s.endProgress(id, prog, "compaction failed")
		return nil, err
	}
	s.endProgress(id, prog, compactionMessage(res.Event))
	return map[string]any{"session": id, "event": res.Event, "checkpoint": res.Checkpoint}, nil
}

type recoverParams struct {
	Session     string `json:"session"`
	Acknowledge bool   `json:"acknowledge"`
}

func (s *Server) recoverCalls(_ context.Context, raw json.RawMessage) (any, error) {
	var p recoverParams
	_, ag, err := s.begin(raw, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	calls, err := ag.Recover(p.Session, p.Acknowledge)
	if err != nil {
		return nil, err
	}
	if len(calls) > 0 && !p.Acknowledge {
		var ids []string
		for _, c := range calls {
			ids = append(ids, c.ID+" ("+c.Name+")")
		}
		return nil, fmt.Errorf("%d uncertain tool call(s): %s. They may or may not have taken effect; check, then send alisio/recover with acknowledge: true to record that their outcome is unknown (nothing is undone or retried)",
			len(calls), strings.Join(ids, ", "))
	}
	s.changed(p.Session)
	return map[string]any{"session": p.Session, "recovered": len(calls), "calls": calls}, nil
}

func (s *Server) sessions(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		All bool `json:"all"`
	}
	st, _, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	ws := s.root()
	if p.All {
		ws = ""
	}
	list, err := st.Sessions(ws)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]any, 0, len(list))
	for _, sess := range list {
		out = append(out, map[string]any{"id": sess.ID, "title": sess.Title, "workspace": sess.Workspace,
			"createdAt": sess.CreatedAt, "updatedAt": sess.UpdatedAt, "messages": sess.Head.ViewLen})
	}
	return map[string]any{"sessions": out}, nil
}

// DefaultPageMessages is how many messages alisio/session returns when the request names no limit: the last
// ones, enough for a chat view to open on however long the session is.
const DefaultPageMessages = 200

func (s *Server) session(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Session          string `json:"session"`
		IncludeCompacted bool   `json:"includeCompacted"`
		Offset           *int   `json:"offset"`
		Limit            *int   `json:"limit"`
	}
	st, _, err := s.begin(raw, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	offset, limit := -1, DefaultPageMessages
	if p.Offset != nil {
		offset = *p.Offset
	}
	if p.Limit != nil {
		limit = *p.Limit
	}
	if offset < -1 || limit < 0 {
		return nil, fmt.Errorf("offset must be 0 or more (or -1 for the last messages) and limit 0 or more (0: every message); got offset %d, limit %d", offset, limit)
	}
	page, err := st.ReadPage(p.Session, p.IncludeCompacted, offset, limit)
	if err != nil {
		return nil, err
	}
	s.status.touch(p.Session)
	head := page.Session.Head
	return map[string]any{"session": page.Session, "messages": page.Messages, "offset": page.Offset, "total": page.Total,
		"compactedMessages": int(head.NextSeq) - head.ViewLen, "uncertainCalls": append([]string{}, head.Totals.Open...)}, nil
}

func (s *Server) newSession(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Title string `json:"title"`
	}
	_, ag, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	if p.Title == "" {
		p.Title = "New session"
	}
	sess, err := ag.NewSession(p.Title, s.root())
	if err != nil {
		return nil, err
	}
	s.status.touch(sess.ID)
	return map[string]any{"session": sess.ID}, nil
}

// contextParts returns what fills the session's transcript, by kind (the editors' Show Context): computed here,
// so that the editor does not receive the transcript itself.
func (s *Server) contextParts(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Session string `json:"session"`
	}
	st, _, err := s.begin(raw, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	v, err := st.Transcript(p.Session)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": p.Session, "parts": agent.ContextParts(v.Messages)}, nil
}

// checkpoint returns the current checkpoint's structured fields, whether it is partial, what it replaced, and
// the relevant files changed since it was written.
func (s *Server) checkpoint(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Session string `json:"session"`
	}
	st, _, err := s.begin(raw, &p, &p.Session)
	if err != nil {
		return nil, err
	}
	ck, sess, err := agent.CurrentCheckpoint(st, p.Session)
	if err != nil {
		return nil, err
	}
	if ck == nil {
		return map[string]any{"session": p.Session, "checkpoint": nil}, nil
	}
	cp, _ := compaction.ParseStructured(ck.Structured)
	// What the checkpoint (and any reduction) replaced: the history's messages no longer in the transcript.
	replaced := int(sess.Head.NextSeq) - sess.Head.ViewLen
	changed := []string{}
	for _, f := range cp.RelevantFiles {
		for _, c := range s.files.ChangedSince(ck.CreatedAt) {
			if c == f.Path {
				changed = append(changed, c)
			}
		}
	}
	return map[string]any{"session": p.Session, "id": ck.ID, "createdAt": ck.CreatedAt.Format(time.RFC3339), "checkpoint": cp,
		"partial": ck.Partial, "text": ck.Text, "replacedMessages": replaced, "relevantFilesChangedSince": changed}, nil
}

func (s *Server) tools(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct{}
	_, ag, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	return ag.Tools.Describe(), nil
}

// memories lists the workspace's memories, after deleting the one named by delete when given.
func (s *Server) memories(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Delete string `json:"delete"`
	}
	st, _, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	ws := s.root()
	if p.Delete != "" {
		if err := st.DeleteMemory(ws, p.Delete); err != nil {
			return nil, err
		}
	}
	ms, err := st.Memories(ws)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = []storage.Memory{}
	}
	return map[string]any{"workspace": ws, "memories": ms}, nil
}

func (s *Server) statusRequest(_ context.Context, raw json.RawMessage) (any, error) {
	var p struct {
		Session string `json:"session"`
	}
	_, ag, err := s.begin(raw, &p, nil)
	if err != nil {
		return nil, err
	}
	id, err := s.resolveSession(ag, p.Session, "")
	if err != nil {
		return nil, err
	}
	s.status.know(id)
	return s.statusOf(id)
}
