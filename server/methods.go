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
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// handlerFunc runs one alisio/* request on its raw params.
type handlerFunc func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// sessionRule says whether handle fills an empty session reference with the workspace's most recent
// session before the handler runs.
type sessionRule bool

const (
	asGiven      sessionRule = false // the handler resolves the reference itself, or has none
	orMostRecent sessionRule = true  // "": the workspace's most recent session (an error when it has none)
)

// handle adapts a typed handler: it decodes the params into P (unknown fields refused), gets the agent (a
// request cancelled while the agent is built is answered at once), and, with orMostRecent, fills the
// session reference of P (an api.SessionRef) before calling fn.
func handle[P any, R any](rule sessionRule, fn func(s *Server, ctx context.Context, ag *agent.Agent, p *P) (R, error)) handlerFunc {
	return func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := decode(raw, &p); err != nil {
			return nil, err
		}
		ag, err := s.agentFor(ctx)
		if err != nil {
			return nil, err
		}
		if ref, ok := any(&p).(interface{ Ref() *api.SessionRef }); ok && rule == orMostRecent {
			if ref.Ref().Session, err = s.resolveSession(ag, ref.Ref().Session, ""); err != nil {
				return nil, err
			}
		}
		return fn(s, ctx, ag, &p)
	}
}

// methods are the custom requests (docs/protocol.md documents each).
var methods = map[string]handlerFunc{
	"alisio/prompt":         handle(asGiven, (*Server).prompt),
	"alisio/compact":        handle(orMostRecent, (*Server).compact),
	"alisio/recover":        handle(orMostRecent, (*Server).recoverCalls),
	"alisio/sessions":       handle(asGiven, (*Server).sessions),
	"alisio/session":        handle(orMostRecent, (*Server).session),
	"alisio/newSession":     handle(asGiven, (*Server).newSession),
	"alisio/checkpoint":     handle(orMostRecent, (*Server).checkpoint),
	"alisio/setCheckpoint":  handle(orMostRecent, (*Server).setCheckpoint),
	"alisio/context":        handle(asGiven, (*Server).contextParts),
	"alisio/tools":          handle(asGiven, (*Server).tools),
	"alisio/status":         handle(asGiven, (*Server).statusRequest),
	"alisio/memories":       handle(asGiven, (*Server).memories),
	"alisio/undoTurn":       handle(orMostRecent, (*Server).undoTurn),
	"alisio/undoCompaction": handle(orMostRecent, (*Server).undoCompaction),
	"alisio/approvalAnswer": handle(asGiven, (*Server).approvalAnswer),
	"alisio/checkProvider":  handle(asGiven, (*Server).checkProvider),
}

func methodNames() []string {
	names := make([]string, 0, len(methods))
	for n := range methods {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
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
		return "", api.ErrNoSession
	}
	sess, err := ag.NewSession(title, ws)
	return sess.ID, err
}

func (s *Server) prompt(ctx context.Context, ag *agent.Agent, p *api.PromptParams) (*api.PromptResult, error) {
	if strings.TrimSpace(p.Text) == "" {
		return nil, &paramsError{"text is required"}
	}
	id, err := s.resolveSession(ag, p.Session, agent.SessionTitle(p.Text))
	if err != nil {
		return nil, err
	}
	prog := s.beginProgress(ctx, p.WorkDoneToken, id, "Alisio")
	res, err := ag.Prompt(s.approvalContext(ctx), id, p.Text)
	s.changed(id)
	if err != nil {
		s.endProgress(id, prog, "failed")
		return nil, s.explainNoProvider(err)
	}
	s.endProgress(id, prog, "done")
	return &api.PromptResult{Session: id, Reply: res.Reply, ModelCalls: res.ModelCalls, Cut: res.Cut}, nil
}

func (s *Server) compact(ctx context.Context, ag *agent.Agent, p *api.CompactParams) (*api.CompactResult, error) {
	id := p.Session
	prog := s.beginProgress(ctx, p.WorkDoneToken, id, "Alisio")
	emit := func(e compaction.Event) {
		s.onAgentEvent(agent.Event{Session: id, Kind: agent.EventCompaction, Compaction: e})
	}
	res, err := ag.Compact(ctx, id, p.Focus, emit)
	s.changed(id)
	if err != nil {
		s.endProgress(id, prog, "compaction failed")
		return nil, err
	}
	s.endProgress(id, prog, api.Summary(res.Event))
	ev := api.CompactionEvent(id, res.Event)
	ev.Summary = s.words().Settings(ev.Summary)
	return &api.CompactResult{Session: id, Event: ev, Checkpoint: res.Checkpoint}, nil
}

func (s *Server) recoverCalls(_ context.Context, ag *agent.Agent, p *api.RecoverParams) (*api.RecoverResult, error) {
	calls, err := ag.Recover(p.Session, p.Acknowledge)
	if err != nil {
		return nil, err
	}
	if len(calls) > 0 && !p.Acknowledge {
		// Explain adds how this edge records it (a confirmation, /recover acknowledge, --acknowledge).
		return nil, &agent.UncertainCallsError{Session: p.Session, Calls: calls}
	}
	s.changed(p.Session)
	return &api.RecoverResult{Session: p.Session, Recovered: len(calls), Calls: calls}, nil
}

func (s *Server) sessions(_ context.Context, ag *agent.Agent, p *api.SessionsParams) (*api.SessionsResult, error) {
	ws := s.root()
	if p.All {
		ws = ""
	}
	list, err := ag.Store.Sessions(ws)
	if err != nil {
		return nil, err
	}
	out := &api.SessionsResult{Sessions: make([]api.SessionSummary, 0, len(list))}
	for _, sess := range list {
		out.Sessions = append(out.Sessions, api.SessionSummary{ID: sess.ID, Title: sess.Title, Workspace: sess.Workspace,
			CreatedAt: sess.CreatedAt, UpdatedAt: sess.UpdatedAt, Messages: sess.Head.ViewLen, CompactedMessages: sess.Head.CompactedMessages()})
	}
	return out, nil
}

// DefaultPageMessages is how many messages alisio/session returns when the request names no limit: the last
// ones, enough for a chat view to open on however long the session is.
const DefaultPageMessages = 200

func (s *Server) session(_ context.Context, ag *agent.Agent, p *api.SessionParams) (*api.SessionResult, error) {
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
	page, err := ag.Store.ReadPage(p.Session, p.IncludeCompacted, offset, limit)
	if err != nil {
		return nil, err
	}
	s.status.touch(p.Session)
	head := page.Session.Head
	return &api.SessionResult{Session: page.Session, Messages: api.Pair(page.Messages, head.Totals.Open), Offset: page.Offset, Total: page.Total,
		CompactedMessages: head.CompactedMessages(), UncertainCalls: append([]string{}, head.Totals.Open...)}, nil
}

func (s *Server) newSession(_ context.Context, ag *agent.Agent, p *api.NewSessionParams) (*api.NewSessionResult, error) {
	if p.Title == "" {
		p.Title = "New session"
	}
	sess, err := ag.NewSession(p.Title, s.root())
	if err != nil {
		return nil, err
	}
	s.status.touch(sess.ID)
	return &api.NewSessionResult{Session: sess.ID}, nil
}

// contextParts returns what fills the session's transcript (the workspace's most recent when none is given;
// none yet: no parts), by kind (the editors' Show Context): computed here, so that the editor does not
// receive the transcript itself.
func (s *Server) contextParts(_ context.Context, ag *agent.Agent, p *api.ContextParams) (*api.ContextResult, error) {
	id, err := s.resolveSession(ag, p.Session, "")
	if errors.Is(err, api.ErrNoSession) {
		return &api.ContextResult{Parts: []agent.ContextPart{}}, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := ag.Store.Transcript(id)
	if err != nil {
		return nil, err
	}
	return &api.ContextResult{Session: id, Parts: agent.ContextParts(v.Messages)}, nil
}

// checkpoint returns the current checkpoint's structured fields, whether it is partial, what it replaced, and
// the relevant files changed since it was written.
func (s *Server) checkpoint(_ context.Context, ag *agent.Agent, p *api.CheckpointParams) (*api.CheckpointResult, error) {
	ck, sess, err := agent.CurrentCheckpoint(ag.Store, p.Session)
	if err != nil {
		return nil, err
	}
	if ck == nil {
		return &api.CheckpointResult{Session: p.Session}, nil
	}
	cp, _ := compaction.ParseStructured(ck.Structured)
	changed := []string{}
	for _, f := range cp.RelevantFiles {
		for _, c := range s.files.ChangedSince(ck.CreatedAt) {
			if c == f.Path {
				changed = append(changed, c)
			}
		}
	}
	// What the checkpoint (and any reduction) replaced: the history's messages no longer in the transcript.
	return &api.CheckpointResult{Session: p.Session, ID: ck.ID, CreatedAt: ck.CreatedAt.Format(time.RFC3339), Checkpoint: &cp,
		Partial: ck.Partial, Text: ck.Text, ReplacedMessages: replacedBy(cp, sess), RelevantFilesChangedSince: changed,
		Editable: compaction.Editable(cp)}, nil
}

// replacedBy is how many messages checkpoint cp stands for: what it counts, or for a checkpoint written before
// it counted them, the session's compacted originals.
func replacedBy(cp compaction.Checkpoint, sess storage.Session) int {
	if cp.Replaced > 0 {
		return cp.Replaced
	}
	return sess.Head.CompactedMessages()
}

// setCheckpoint replaces the session's checkpoint with the user's edit, and answers the checkpoint now.
func (s *Server) setCheckpoint(ctx context.Context, ag *agent.Agent, p *api.SetCheckpointParams) (*api.CheckpointResult, error) {
	_, err := ag.EditCheckpoint(p.Session, p.Document(), p.Base)
	s.changed(p.Session)
	if err != nil {
		return nil, err
	}
	return s.checkpoint(ctx, ag, &api.CheckpointParams{SessionRef: p.SessionRef})
}

func (s *Server) tools(_ context.Context, ag *agent.Agent, _ *api.ToolsParams) (api.ToolsResult, error) {
	return ag.Tools.Describe(), nil
}

// memories lists the workspace's memories, after deleting the one named by delete when given.
func (s *Server) memories(_ context.Context, ag *agent.Agent, p *api.MemoriesParams) (*api.MemoriesResult, error) {
	ws := s.root()
	if p.Delete != "" {
		if err := ag.Store.DeleteMemory(ws, p.Delete); err != nil {
			return nil, err
		}
	}
	ms, err := ag.Store.Memories(ws)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		ms = []storage.Memory{}
	}
	limit := ag.Settings().Memory.MaxChars
	return &api.MemoriesResult{Workspace: ws, Memories: ms, Sent: agent.MemoriesSent(ms, limit), MaxChars: limit}, nil
}

// statusRequest is the meter of the session (the workspace's most recent when none is given); with
// firstRequest, in a workspace that has none yet, the meter of its first request.
func (s *Server) statusRequest(_ context.Context, ag *agent.Agent, p *api.StatusParams) (*api.Status, error) {
	id, err := s.resolveSession(ag, p.Session, "")
	if p.Session == "" && p.NewSession || errors.Is(err, api.ErrNoSession) && p.FirstRequest {
		st, ferr := ag.FirstRequestStatus(s.root())
		if ferr != nil {
			return nil, ferr
		}
		return s.meter(st, ""), nil
	}
	if err != nil {
		return nil, err
	}
	s.status.know(id)
	return s.statusWith(ag, id)
}
