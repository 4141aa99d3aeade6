package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// schemaVersion is the "v" of every alisio/event and alisio/status payload.
const schemaVersion = 1

// statusSender throttles alisio/status: at most one notification per session per interval, and the last
// state is always delivered (a trailing send after a burst).
type statusSender struct {
	ctx      context.Context
	interval time.Duration
	send     func(session string)

	mu      sync.Mutex
	known   map[string]bool
	dirty   map[string]bool
	timer   *time.Timer
	last    time.Time
	stopped bool
	// flushes counts the scheduled or running flushes, so that stop can wait for them.
	flushes sync.WaitGroup
}

func newStatusSender(ctx context.Context, interval time.Duration, send func(string)) *statusSender {
	return &statusSender{ctx: ctx, interval: interval, send: send, known: map[string]bool{}, dirty: map[string]bool{}}
}

// touch marks session's status as changed.
func (t *statusSender) touch(session string) {
	if session == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.known[session], t.dirty[session] = true, true
	t.scheduleLocked()
}

// know records that this connection shows session, so that changes made by other windows reach it.
func (t *statusSender) know(session string) {
	t.mu.Lock()
	t.known[session] = true
	t.mu.Unlock()
}

// touchKnown marks session as changed if this connection has shown it (a change made by another window).
func (t *statusSender) touchKnown(session string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.known[session] {
		t.dirty[session] = true
		t.scheduleLocked()
	}
}

// touchAll marks every session seen so far (after a settings change).
func (t *statusSender) touchAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range t.known {
		t.dirty[s] = true
	}
	if len(t.dirty) > 0 {
		t.scheduleLocked()
	}
}

func (t *statusSender) scheduleLocked() {
	if t.timer != nil || t.stopped {
		return
	}
	wait := time.Until(t.last.Add(t.interval))
	t.flushes.Add(1)
	t.timer = time.AfterFunc(max(wait, 0), t.flush)
}

// stop cancels the pending flush and waits for one already running: after it returns nothing reads the
// store for a status any more, so the store can be closed.
func (t *statusSender) stop() {
	t.mu.Lock()
	t.stopped = true
	if t.timer != nil && t.timer.Stop() {
		t.flushes.Done()
	}
	t.timer = nil
	t.mu.Unlock()
	t.flushes.Wait()
}

func (t *statusSender) flush() {
	defer t.flushes.Done()
	t.mu.Lock()
	batch := t.dirty
	t.dirty, t.timer, t.last = map[string]bool{}, nil, time.Now()
	stopped := t.stopped
	t.mu.Unlock()
	if stopped || t.ctx.Err() != nil {
		return
	}
	for s := range batch {
		t.send(s)
	}
}

// statusPayload is the alisio/status notification: the agent's meter plus what only the daemon knows.
type statusPayload struct {
	V       int    `json:"v"`
	Session string `json:"session"`
	agent.Status
	Compacting bool `json:"compacting"`
}

func (s *Server) statusOf(session string) (statusPayload, error) {
	ag, err := s.agentFor()
	if err != nil {
		return statusPayload{}, err
	}
	st, err := ag.Status(session)
	if err != nil {
		return statusPayload{}, err
	}
	s.mu.Lock()
	compacting := s.compacting[session]
	s.mu.Unlock()
	return statusPayload{V: schemaVersion, Session: session, Status: st, Compacting: compacting}, nil
}

func (s *Server) sendStatus(session string) {
	p, err := s.statusOf(session)
	if err != nil {
		s.log.Debug("no status", zap.String("session", session), zap.Error(err))
		return
	}
	if err := s.conn.Notify(s.connCtx, "alisio/status", p); err != nil {
		s.log.Debug("sending status", zap.Error(err))
	}
}

// event sends an alisio/event notification.
func (s *Server) event(session, typ string, fields any) {
	payload := map[string]any{}
	if fields != nil {
		raw, _ := json.Marshal(fields)
		_ = json.Unmarshal(raw, &payload)
	}
	payload["v"], payload["session"], payload["type"] = schemaVersion, session, typ
	if err := s.conn.Notify(s.connCtx, "alisio/event", payload); err != nil {
		s.log.Debug("sending an event", zap.Error(err))
	}
}

// onAgentEvent forwards what a turn reports to the editor, feeds the progress of the request that runs it,
// and marks the meter changed.
func (s *Server) onAgentEvent(e agent.Event) {
	p := s.progressOf(e.Session)
	switch e.Kind {
	case agent.EventCompaction:
		s.event(e.Session, e.Compaction.Type, e.Compaction)
		s.compactionState(e.Session, e.Compaction)
		p.report(compactionMessage(e.Compaction))
	case agent.EventDelta:
		s.event(e.Session, "delta", map[string]string{"text": e.Delta.Text, "reasoning": e.Delta.Reasoning})
		return
	case agent.EventToolCall:
		s.event(e.Session, "tool_call", map[string]any{"id": e.Call.ID, "name": e.Call.Name, "arguments": e.Call.Arguments})
		p.report("running " + e.Call.Name)
	case agent.EventToolResult:
		s.event(e.Session, "tool_result", map[string]any{"id": e.Call.ID, "name": e.Call.Name, "isError": e.IsError, "chars": len([]rune(e.Result))})
	case agent.EventReply:
		s.event(e.Session, "reply", map[string]any{"text": e.Result})
	}
	s.changed(e.Session)
}

func (s *Server) compactionState(session string, e compaction.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e.Type {
	case compaction.EventStarted:
		s.compacting[session] = true
	case compaction.EventCompleted, compaction.EventFailed, compaction.EventSkipped:
		delete(s.compacting, session)
	}
}

func compactionMessage(e compaction.Event) string {
	switch e.Type {
	case compaction.EventStarted:
		return fmt.Sprintf("compacting %d messages (%s)", e.SpanMessages, e.Reason)
	case compaction.EventCompleted:
		msg := fmt.Sprintf("compacted: %d → %d chars", e.BeforeChars, e.AfterChars)
		if e.Partial {
			msg += " (partial checkpoint)"
		}
		return msg
	case compaction.EventReduced:
		return fmt.Sprintf("reduced %d messages", e.Messages)
	}
	return e.Message
}

// progress is one work-done progress (window/workDoneProgress); a nil progress does nothing.
type progress struct {
	s     *Server
	token json.RawMessage
}

var progressSeq atomic.Int64

// beginProgress starts a work-done progress with the client's token, or one the server creates when the
// client supports it; it returns nil when neither is possible.
func (s *Server) beginProgress(ctx context.Context, clientToken json.RawMessage, session, title string) *progress {
	token := clientToken
	if len(token) == 0 || string(token) == "null" {
		if !s.caps.workDoneProgress {
			return nil
		}
		token, _ = json.Marshal(fmt.Sprintf("alisio-%d", progressSeq.Add(1)))
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := s.conn.Call(cctx, "window/workDoneProgress/create", map[string]any{"token": token}, nil); err != nil {
			s.log.Debug("the client refused a progress token", zap.Error(err))
			return nil
		}
	}
	p := &progress{s: s, token: token}
	p.send(map[string]any{"kind": "begin", "title": title, "cancellable": true})
	s.mu.Lock()
	s.progress[session] = p
	s.mu.Unlock()
	return p
}

func (s *Server) progressOf(session string) *progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.progress[session]
}

func (p *progress) send(value map[string]any) {
	if p == nil {
		return
	}
	_ = p.s.conn.Notify(p.s.connCtx, "$/progress", map[string]any{"token": p.token, "value": value})
}

func (p *progress) report(msg string) {
	if msg != "" {
		p.send(map[string]any{"kind": "report", "message": msg})
	}
}

// end finishes the progress of session.
func (s *Server) endProgress(session string, p *progress, msg string) {
	if p == nil {
		return
	}
	p.send(map[string]any{"kind": "end", "message": msg})
	s.mu.Lock()
	if s.progress[session] == p {
		delete(s.progress, session)
	}
	s.mu.Unlock()
}
