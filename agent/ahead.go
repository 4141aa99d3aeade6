package agent

import (
	"context"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// Background compaction: once a session's request passes compaction.backgroundAt, the summary the next
// compaction needs is written in the background (compaction.SummarizeAhead), while the user reads and types;
// the automatic compaction at compaction.threshold then takes it if the transcript still begins with what it
// summarized. A compaction of any kind, an undo or a change of the view's start discards it.

// aheadJob is a background summary of a session, running or written.
type aheadJob struct {
	cancel context.CancelFunc
	done   chan struct{}
	result *compaction.Ahead // set when done and written
}

// running says whether a background summary of the session is being written (the meter shows it).
func (st *sessionState) running() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ahead == nil {
		return false
	}
	select {
	case <-st.ahead.done:
		return false
	default:
		return true
	}
}

// minPredictedShare is the least share of the window (or of maxContextChars) at which a background summary
// starts because the next turn is expected to reach the trigger.
const minPredictedShare = 0.5

// hasAhead says whether a background summary of the session runs or waits (the turn loop decides whether to
// take it only then: the common case costs nothing more).
func (st *sessionState) hasAhead() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ahead != nil
}

// maybeStartAhead starts, at the end of a turn, a background summary of v when none runs or waits and the
// request, short of the trigger, passed compaction.backgroundAt — or is expected to reach the trigger in the
// next turn, growing as much as this one did (from half the window up). sum is v's summary.
func (a *Agent) maybeStartAhead(id string, st *sessionState, v storage.View, sum viewSummary) {
	cfg := a.Settings()
	at := cfg.Compaction.BackgroundAt
	chars := sum.meter.Chars()
	st.mu.Lock()
	grown := chars - st.turnEndChars
	st.turnEndChars = chars
	st.mu.Unlock()
	if at <= 0 || !cfg.Compaction.Auto || at >= cfg.Compaction.Threshold || len(sum.uncertain) > 0 {
		return
	}
	d := compaction.Decide(a.Sizes(v.Session, chars), a.budgetOf(v.Session.ID))
	share := max(d.WindowFraction, d.CharsFraction) * cfg.Compaction.Threshold
	next := compaction.Decide(a.Sizes(v.Session, chars+max(grown, 0)), a.budgetOf(v.Session.ID))
	if d.Compact || share < at && !(next.Compact && share >= minPredictedShare) {
		return
	}
	st.mu.Lock()
	if st.ahead != nil {
		st.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	job := &aheadJob{cancel: cancel, done: make(chan struct{})}
	st.ahead = job
	st.mu.Unlock()
	emit := a.compactionEvents(id)
	in, opts := a.input(v), a.options(v.Session, compaction.ReasonAuto, "")
	opts.HardLimit = d.HardLimit
	emit(compaction.Event{Type: compaction.EventAheadStarted, Reason: compaction.ReasonAuto})
	go func() {
		defer close(job.done)
		res, err := compaction.SummarizeAhead(ctx, in, opts, a.Summarizer)
		if err != nil {
			if ctx.Err() == nil {
				a.Log.Info("the background summary failed; the compaction will summarize when it runs", zap.String("session", id), zap.Error(err))
				emit(compaction.Event{Type: compaction.EventAheadDiscarded, Reason: compaction.ReasonAuto, Message: "the background summary failed: " + err.Error()})
			}
			return
		}
		st.mu.Lock()
		job.result = res
		st.mu.Unlock()
		emit(compaction.Event{Type: compaction.EventAheadReady, Reason: compaction.ReasonAuto, SpanMessages: len(res.SpanIDs)})
	}()
}

// takeAhead is the session's background summary for a compaction about to run: once written (waiting for one
// still being written, as long as ctx allows), nil when there is none. The session has none after it.
func (st *sessionState) takeAhead(ctx context.Context) *compaction.Ahead {
	st.mu.Lock()
	job := st.ahead
	st.ahead = nil
	st.mu.Unlock()
	if job == nil {
		return nil
	}
	select {
	case <-job.done:
	case <-ctx.Done():
		job.cancel()
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return job.result
}

// discardAhead stops and forgets the session's background summary (a compaction, an undo, settings).
func (st *sessionState) discardAhead() {
	st.mu.Lock()
	job := st.ahead
	st.ahead = nil
	st.mu.Unlock()
	if job != nil {
		job.cancel()
	}
}

// discardAllAhead discards the background summaries of every session.
func (a *Agent) discardAllAhead() {
	a.mu.Lock()
	states := make([]*sessionState, 0, len(a.sessions))
	for _, st := range a.sessions {
		states = append(states, st)
	}
	a.mu.Unlock()
	for _, st := range states {
		st.discardAhead()
	}
}
