package server

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// statusSender throttles alisio/status: at most one notification per session per interval, and the last
// state is always delivered (a trailing send after a burst).
type statusSender struct {
	ctx      context.Context
	interval time.Duration
	send     func(session string, elsewhere bool)

	mu    sync.Mutex
	known map[string]bool
	dirty map[string]bool
	// elsewhere are the dirty sessions that another window or the command line wrote.
	elsewhere map[string]bool
	timer     *time.Timer
	last      time.Time
	stopped   bool
	// flushes counts the scheduled or running flushes, so that stop can wait for them.
	flushes sync.WaitGroup
}

func newStatusSender(ctx context.Context, interval time.Duration, send func(session string, elsewhere bool)) *statusSender {
	return &statusSender{ctx: ctx, interval: interval, send: send, known: map[string]bool{}, dirty: map[string]bool{}, elsewhere: map[string]bool{}}
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
		t.dirty[session], t.elsewhere[session] = true, true
		t.scheduleLocked()
	}
}

// touchAll marks every session seen so far (after a settings change).
func (t *statusSender) touchAll() { t.touchEvery(false) }

// touchAllElsewhere marks every session seen so far as written elsewhere (after the command line changed the
// store).
func (t *statusSender) touchAllElsewhere() { t.touchEvery(true) }

func (t *statusSender) touchEvery(elsewhere bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range t.known {
		t.dirty[s] = true
		if elsewhere {
			t.elsewhere[s] = true
		}
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
	batch, elsewhere := t.dirty, t.elsewhere
	t.dirty, t.elsewhere, t.timer, t.last = map[string]bool{}, map[string]bool{}, nil, time.Now()
	stopped := t.stopped
	t.mu.Unlock()
	if stopped || t.ctx.Err() != nil {
		return
	}
	for s := range batch {
		t.send(s, elsewhere[s])
	}
}

// statusWith is the meter of session: the agent's, and whether a compaction of it runs.
func (s *Server) statusWith(ag *agent.Agent, session string) (*api.Status, error) {
	st, err := ag.Status(session)
	if err != nil {
		return nil, err
	}
	return s.meter(st, session), nil
}

// meter is the alisio/status payload of st, and whether a compaction of session runs.
func (s *Server) meter(st agent.Status, session string) *api.Status {
	s.progressMu.Lock()
	compacting := s.compacting[session]
	s.progressMu.Unlock()
	w := s.words()
	meter := api.MeterOf(st)
	meter.NextCall = w.Settings(meter.NextCall)
	return &api.Status{V: api.SchemaVersion, Status: st, Compacting: compacting, Notices: api.Notices(st, w), Meter: meter}
}

// sendStatus sends the meter of session; elsewhere says that another window or the command line wrote the
// session since the last one.
func (s *Server) sendStatus(session string, elsewhere bool) {
	ag, err := s.agentFor(s.connCtx)
	var p *api.Status
	if err == nil {
		p, err = s.statusWith(ag, session)
	}
	if err != nil {
		s.log.Debug("no status", zap.String("session", session), zap.Error(err))
		return
	}
	p.ChangedElsewhere = elsewhere
	if err := s.conn.Notify(s.connCtx, "alisio/status", p); err != nil {
		s.log.Debug("sending status", zap.Error(err))
	}
}

// onAgentEvent forwards what a turn reports to the editor, feeds the progress of the request that runs it,
// and marks the meter changed.
func (s *Server) onAgentEvent(e agent.Event) {
	if ev, ok := api.EventOf(e); ok {
		if ev.Summary != "" { // a compaction's sentence, in the editor's words (deltas, the many, have none)
			ev.Summary = s.words().Settings(ev.Summary)
		}
		if err := s.conn.Notify(s.connCtx, "alisio/event", ev); err != nil {
			s.log.Debug("sending an event", zap.Error(err))
		}
	}
	p := s.progressOf(e.Session)
	switch e.Kind {
	case agent.EventCompaction:
		s.compactionState(e.Session, e.Compaction)
		p.report(api.Summary(e.Compaction))
	case agent.EventDelta:
		return
	case agent.EventToolCall:
		p.report("running " + e.Call.Name)
	}
	s.changed(e.Session)
}

func (s *Server) compactionState(session string, e compaction.Event) {
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	switch e.Type {
	case compaction.EventStarted:
		s.compacting[session] = true
	case compaction.EventCompleted, compaction.EventFailed, compaction.EventSkipped:
		delete(s.compacting, session)
	}
}

// progress is one work-done progress (window/workDoneProgress); a nil progress does nothing.
type progress struct {
	s     *Server
	token json.RawMessage
}

// beginProgress starts a work-done progress with the client's token, or one the server creates when the
// client supports it; it returns nil when neither is possible.
func (s *Server) beginProgress(ctx context.Context, clientToken json.RawMessage, session, title string) *progress {
	token := clientToken
	if len(token) == 0 || string(token) == "null" {
		if !s.caps.workDoneProgress {
			return nil
		}
		token, _ = json.Marshal(fmt.Sprintf("alisio-%d", s.hub.progressSeq.Add(1)))
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if _, err := s.conn.Call(cctx, "window/workDoneProgress/create", map[string]any{"token": token}, nil); err != nil {
			s.log.Debug("the client refused a progress token", zap.Error(err))
			return nil
		}
	}
	p := &progress{s: s, token: token}
	p.send(map[string]any{"kind": "begin", "title": title, "cancellable": true})
	s.progressMu.Lock()
	s.progress[session] = p
	s.progressMu.Unlock()
	return p
}

func (s *Server) progressOf(session string) *progress {
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
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
	s.progressMu.Lock()
	if s.progress[session] == p {
		delete(s.progress, session)
	}
	s.progressMu.Unlock()
}
