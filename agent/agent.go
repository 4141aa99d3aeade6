package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// DefaultInstructions is the agent's system prompt.
const DefaultInstructions = `You are alisio, a careful coding agent working in the user's workspace through tools. Read before you edit, keep changes minimal and focused, follow the user's instructions and constraints exactly, and say clearly what you changed and what remains. Paths are relative to the workspace root.`

// ErrNoProvider: the settings name no provider, so no model can be called.
var ErrNoProvider = errors.New("no provider is configured")

// ErrModelCall: a model call of the turn failed; the turn resumes when its prompt is sent again in its session.
var ErrModelCall = errors.New("model call failed")

// ErrUncertain: the session has tool calls whose outcome is unknown (U1); recover them first.
var ErrUncertain = errors.New("the session has tool calls with an unknown outcome")

// EventKind names what an agent Event reports.
type EventKind string

// Agent event kinds; compaction events arrive as EventCompaction with the compaction.Event attached.
const (
	EventDelta      EventKind = "delta"
	EventToolCall   EventKind = "tool_call"
	EventToolResult EventKind = "tool_result"
	EventCompaction EventKind = "compaction"
	EventReply      EventKind = "reply"
)

// Event is something the agent reports while a turn runs.
type Event struct {
	Session string
	Kind    EventKind
	Delta   provider.Delta
	Call    transcript.ToolCall
	Result  string
	IsError bool
	// Declined: the call did not run because the user did not approve it (tool_result).
	Declined   bool
	Compaction compaction.Event
}

// Agent runs turns of stored sessions: before every model call the compaction engine runs; tool calls are
// journaled before they run and their results after (U1).
type Agent struct {
	ContextManager
	Chat  provider.Chat
	Tools *tools.Set
	Log   *zap.Logger
	// OnEvent, when set, receives every event of every turn.
	OnEvent func(Event)

	// mcpMu serializes SyncMCP; mcp holds the connected MCP servers and the settings they were started with.
	mcpMu sync.Mutex
	mcp   map[string]mcpConn

	// shared holds the turn locks and known windows of every agent of the process.
	shared *Shared

	mu       sync.Mutex
	sessions map[string]*sessionState
}

// sessionState is what the agent keeps per session between calls: the running size and the compaction guard
// (the tokens used are the store's and the provider's calibration the daemon's, Shared, so that every window
// of a session counts alike).
type sessionState struct {
	guard compaction.Guard

	mu sync.Mutex // guards the figures below, read by Status while a turn runs
	// meter summarizes the stored transcript as the agent last saw it; valid while the stored head matches.
	meter    viewSummary
	hasMeter bool
	// ahead is the background summary of the session, turnEndChars the transcript's size at the end of the
	// last turn (ahead.go).
	ahead        *aheadJob
	turnEndChars int
}

// forgetMeter drops the meter after a change made outside a turn; the next status read seeds it again.
func (st *sessionState) forgetMeter() {
	st.mu.Lock()
	st.hasMeter = false
	st.mu.Unlock()
}

func (st *sessionState) setMeter(sum viewSummary) {
	st.mu.Lock()
	st.meter, st.hasMeter = sum, true
	st.mu.Unlock()
}

func (a *Agent) state(id string) *sessionState {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions == nil {
		a.sessions = map[string]*sessionState{}
	}
	st, ok := a.sessions[id]
	if !ok {
		st = &sessionState{}
		a.sessions[id] = st
	}
	return st
}

func (a *Agent) emit(e Event) {
	if a.OnEvent != nil {
		a.OnEvent(e)
	}
}

// TurnResult is the outcome of Prompt.
type TurnResult struct {
	// Reply is the model's final text; ModelCalls how many calls the turn took.
	Reply      string
	ModelCalls int
	// Cut reports that limits.maxOutputTokens cut the final reply.
	Cut bool
	// Resumed reports that the prompt continued its own unfinished turn instead of being stored again.
	Resumed bool
}

// UncertainCallsError lists uncertain calls and says how to recover.
type UncertainCallsError struct {
	Session string
	Calls   []transcript.ToolCall
}

// Error lists the calls and what is known of them; how to recover them is added by the edge that shows it
// (api.Explain).
func (e *UncertainCallsError) Error() string {
	var ids []string
	for _, c := range e.Calls {
		ids = append(ids, fmt.Sprintf("%s (%s)", c.ID, c.Name))
	}
	return fmt.Sprintf("%v: %s. They have no recorded result (alisio-lsp stopped while they ran, or the session was imported without their results), so they may or may not have taken effect; they are never retried automatically.",
		ErrUncertain, strings.Join(ids, ", "))
}

// Unwrap lets errors.Is match ErrUncertain.
func (e *UncertainCallsError) Unwrap() error { return ErrUncertain }

// Prompt runs one turn of session id: the user's text, then model calls and tool calls until the model answers
// without calls, the session's token cap is reached, or ctx is cancelled. Turns of one session are serialized.
func (a *Agent) Prompt(ctx context.Context, id, text string) (TurnResult, error) {
	if a.Chat == nil {
		return TurnResult{}, ErrNoProvider
	}
	st := a.state(id)
	defer a.shared.lockTurn(a.Store, id)()
	var res TurnResult
	// The transcript is read once per turn and kept in step with what the turn appends; it is read again
	// only after a compaction or reduction rewrote it.
	view, err := a.Store.Transcript(id)
	if err != nil {
		return res, err
	}
	if calls := transcript.UnansweredCalls(view.Messages); len(calls) > 0 {
		return res, &UncertainCallsError{Session: id, Calls: calls}
	}
	st.setMeter(summarize(view.Session))
	// The session's tokens so far (C4), as stored: they include every window's turns and survive restarts.
	// Checkpoints carry no usage: the summarizer's tokens are not counted.
	used := tokensOf(view.Session)
	if limit := a.Settings().Limits.MaxTokens; limit > 0 && used >= limit {
		return res, tokenCapError(used, limit) // refused before the prompt is stored
	}
	if unfinishedTurn(view.Messages, text) {
		// The same prompt again after its turn stopped (a failed model call): the turn resumes where it
		// stopped, the prompt is not stored twice.
		res.Resumed = true
	} else if err := a.appendTo(st, &view, transcript.Message{Role: transcript.RoleUser, Text: text}); err != nil {
		return res, fmt.Errorf("saving the prompt: %w", err)
	}
	st.guard.NewTurn()
	refusals := 0 // how many times the provider refused this model call as over its window
	for {
		cfg := a.Settings() // settings changed during the turn apply from the next model call
		if err := ctx.Err(); err != nil {
			return res, turnStopped{err}
		}
		if cfg.Limits.MaxTokens > 0 && used >= cfg.Limits.MaxTokens {
			return res, tokenCapError(used, cfg.Limits.MaxTokens)
		}
		if steps := cfg.Limits.MaxStepsPerTurn; steps > 0 && res.ModelCalls >= steps {
			return res, &StepLimitError{Steps: res.ModelCalls}
		}
		emit := a.compactionEvents(id)
		st.mu.Lock()
		sum := st.meter // the running summary of view: the decision needs no rescan
		st.mu.Unlock()
		// A compaction about to run takes the background summary (waiting for one still being written).
		var ahead *compaction.Ahead
		if st.hasAhead() {
			if d := compaction.Decide(a.Sizes(view.Session, sum.meter.Chars()), a.budgetOf(id)); d.Compact || d.OverHardLimit {
				ahead = st.takeAhead(ctx)
			}
		}
		p, err := a.prepare(ctx, view, &sum, &st.guard, emit, ahead)
		if p.Changed {
			st.setMeter(p.sum) // saved even when the F1 error follows
			st.discardAhead()  // its span is gone, or no longer where it was
		}
		if ce := (*compaction.CatalogError)(nil); errors.As(err, &ce) {
			ce.Sources = a.largestSources(3)
		}
		if err != nil {
			return res, err
		}
		view = p.view
		reply, err := a.Chat.Complete(ctx, provider.Request{System: a.SystemPrompt(view.Session), Messages: view.Messages, Tools: a.Tools.Specs(),
			MaxOutputTokens: cfg.Limits.MaxOutputTokens, CacheKey: id}, func(d provider.Delta) { a.emit(Event{Session: id, Kind: EventDelta, Delta: d}) })
		res.ModelCalls++
		var over *provider.ContextOverflowError
		if errors.As(err, &over) && refusals < MaxOverflowRetries {
			// The provider counts more tokens than the estimate, or its window is smaller than the one known:
			// the session is measured by its count from now on, which compacts it before the call is sent again.
			refusals++
			b, kerr := a.learnOverflow(id, p.chars, over)
			if kerr != nil {
				a.Log.Warn("the provider's measure of the session was not kept; a restart sizes it by chars/4 again", zap.String("session", id), zap.Error(kerr))
			}
			a.Log.Info("the provider refused a request as over the model's window; measuring the session by its count",
				zap.String("session", id), zap.Int("chars", p.chars), zap.Int("reportedTokens", over.InputTokens),
				zap.Int("reportedWindow", over.Window), zap.Float64("charsPerToken", b.CharsPerTokenInUse()), zap.Int("window", b.Window))
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return res, turnStopped{ctx.Err()}
			}
			if over != nil {
				err = fmt.Errorf("%w; alisio-lsp compacted the conversation to the provider's count and sent it again, and it was still refused: set provider.contextWindow to the model's window in tokens, or lower compaction.threshold", err)
			}
			return res, fmt.Errorf("%w: %w (your prompt and everything the turn did so far are saved; send the same prompt again in this session to resume the turn: it is not stored twice)", ErrModelCall, err)
		}
		refusals = 0
		used += reply.Usage.PromptTokens + reply.Usage.CompletionTokens
		if reply.Usage.PromptTokens > 0 {
			a.shared.calibrate(a.Store, id, p.chars, reply.Usage.PromptTokens)
		}
		if reply.Message.Usage != nil {
			reply.Message.Usage.RequestChars = p.chars // stored: the calibration outlives the daemon
		}
		// The assistant message, with its calls, is the journal entry written before any call runs.
		if err := a.appendTo(st, &view, reply.Message); err != nil {
			return res, fmt.Errorf("saving the reply: %w", err)
		}
		if len(reply.Message.ToolCalls) == 0 {
			res.Reply, res.Cut = reply.Message.Text, reply.FinishReason == "length"
			a.emit(Event{Session: id, Kind: EventReply, Result: res.Reply})
			st.mu.Lock()
			sum := st.meter
			st.mu.Unlock()
			a.maybeStartAhead(id, st, view, sum) // written while the user reads the reply and types the next prompt
			return res, nil
		}
		a.Tools.SetOutputChars(a.ToolOutputCap())
		for _, call := range reply.Message.ToolCalls {
			a.emit(Event{Session: id, Kind: EventToolCall, Call: call})
			out, isErr, declined := a.runCall(ctx, id, call)
			a.emit(Event{Session: id, Kind: EventToolResult, Call: call, Result: out, IsError: isErr, Declined: declined})
			result := transcript.Message{Role: transcript.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: out, IsError: isErr, Declined: declined}
			if err := a.appendTo(st, &view, result); err != nil {
				return res, fmt.Errorf("saving the result of %s: %w", call.ID, err)
			}
		}
	}
}

// StepLimitError stops a turn whose model kept calling tools for limits.maxStepsPerTurn model calls.
type StepLimitError struct{ Steps int }

// Error says what happened and how to go on.
func (e *StepLimitError) Error() string {
	return fmt.Sprintf("the turn stopped after %d model calls (limits.maxStepsPerTurn): the model kept asking for tools without answering. "+
		"Everything it did is saved; send another prompt (for example \"continue\") to let it go on, "+
		"or raise limits.maxStepsPerTurn (0 = no cap)", e.Steps)
}

// ErrTurnStopped: the user stopped the turn (Ctrl-C, Stop, a closed terminal); what it did is saved.
var ErrTurnStopped = errors.New("the turn was stopped")

// turnStopped is ErrTurnStopped with its cause (the context's error), in words for the user.
type turnStopped struct{ cause error }

func (e turnStopped) Error() string {
	return "the turn was stopped: what it did so far is saved, and the next prompt in this session continues from there"
}

// Unwrap lets errors.Is match ErrTurnStopped and the cause (context.Canceled).
func (e turnStopped) Unwrap() []error { return []error{ErrTurnStopped, e.cause} }

// toolCancelGrace is how long a cancelled turn waits for its running tool to stop before it leaves it behind.
const toolCancelGrace = 500 * time.Millisecond

// runTool runs call. A cancel ends the wait within toolCancelGrace even when the tool does not heed it (a
// read stuck on a network file system, a hook that ignores its context): the tool is left to finish on its
// own, and the recorded result says that its effects may be partial.
func (a *Agent) runTool(ctx context.Context, call transcript.ToolCall) (string, bool) {
	const cancelled = "The call was cancelled by the user before it finished; its effects may be partial."
	type outcome struct {
		out   string
		isErr bool
	}
	done := make(chan outcome, 1)
	go func() {
		out, isErr := a.Tools.Run(ctx, call.Name, call.Arguments)
		done <- outcome{out, isErr}
	}()
	select {
	case r := <-done:
		if ctx.Err() != nil {
			return cancelled, true
		}
		return r.out, r.isErr
	case <-ctx.Done():
		select {
		case <-done:
		case <-time.After(toolCancelGrace):
			a.Log.Warn("a cancelled tool call did not stop; the turn ended without it", zap.String("tool", call.Name))
		}
		return cancelled, true
	}
}

func tokenCapError(used, limit int) error {
	return fmt.Errorf("the session reached limits.maxTokens (%d tokens used of %d); raise the limit or start a new session", used, limit)
}

// SessionTitle names a new session after its first prompt.
func SessionTitle(text string) string {
	t := storage.CleanTitle(text)
	if r := []rune(t); len(r) > 60 {
		t = string(r[:59]) + "…"
	}
	return t
}

// appendTo stores m durably and adds it to the in-memory view and the session's meter.
func (a *Agent) appendTo(st *sessionState, v *storage.View, m transcript.Message) error {
	stored, err := a.Store.Append(v.Session.ID, m)
	if err != nil {
		return err
	}
	v.Messages = append(v.Messages, stored...)
	v.Session.Head.ViewLen += len(stored)
	st.mu.Lock()
	st.meter.add(stored...)
	st.mu.Unlock()
	return nil
}

// Calibration is the per-session comparison of the chars/4 estimate with what the provider reported.
type Calibration struct {
	// EstimatedTokens is chars/4 of the last request; ReportedTokens the prompt tokens the provider reported
	// for it; CharsPerToken the observed ratio (0 until a report).
	EstimatedTokens int     `json:"estimatedTokens"`
	ReportedTokens  int     `json:"reportedTokens"`
	CharsPerToken   float64 `json:"charsPerToken"`
}

// Calibration returns the session's usage calibration, the same for every agent of the daemon (Shared).
func (a *Agent) Calibration(id string) (Calibration, error) {
	sess, err := a.Store.Session(id)
	if err != nil {
		return Calibration{}, err
	}
	return a.calibration(sess), nil
}

// calibration is the calibration of sess from the last request this daemon sent for it, else from the last
// reply stored with the request's size (one sent before a restart).
func (a *Agent) calibration(sess storage.Session) Calibration {
	last := a.shared.calibrationOf(a.Store, sess.ID)
	if t := sess.Head.Totals; last.reported == 0 && t != nil && t.Usage != nil && t.Usage.Last.RequestChars > 0 {
		last = calibration{chars: t.Usage.Last.RequestChars, reported: t.Usage.Last.PromptTokens}
	}
	c := Calibration{EstimatedTokens: transcript.EstimateTokens(last.chars), ReportedTokens: last.reported}
	if last.reported > 0 {
		c.CharsPerToken = float64(last.chars) / float64(last.reported)
	}
	return c
}

// Status is the context meter of session id with the usage calibration filled in. It costs one record read,
// however long the transcript: while the agent's own view of the session is current (the stored head is the
// one it last wrote) its running summary is used, in which calls of a running turn are in flight, not
// uncertain; otherwise the totals the record keeps.
func (a *Agent) Status(id string) (Status, error) {
	sess, err := a.Store.Session(id)
	if err != nil {
		return Status{}, err
	}
	state := a.state(id)
	state.mu.Lock()
	sum, ok := state.meter, state.hasMeter && state.meter.epoch == sess.Head.Epoch && state.meter.viewLen == sess.Head.ViewLen
	state.mu.Unlock()
	if !ok {
		sum = summarize(sess)
		state.mu.Lock()
		if !state.hasMeter { // never overwrite the meter of a turn that may be running
			state.meter, state.hasMeter = sum, true
		}
		state.mu.Unlock()
	}
	st := a.statusOf(sess, sum)
	st.CompactingInBackground = state.running()
	c := a.calibration(sess)
	st.LastReportedTokens, st.CalibratedTokens = c.ReportedTokens, st.EstimatedTokens
	if c.CharsPerToken > 0 {
		st.CalibratedTokens = int(float64(st.UsedChars+st.ToolsChars) / c.CharsPerToken)
	}
	return st, nil
}

// Compact runs a manual compaction of session id, after any turn of that session in progress.
func (a *Agent) Compact(ctx context.Context, id, focus string, emit compaction.Emitter) (compaction.Result, error) {
	st := a.state(id)
	defer a.shared.lockTurn(a.Store, id)()
	defer st.forgetMeter()
	st.discardAhead()
	inMeter := emit
	if emit != nil {
		inMeter = func(e compaction.Event) { emit(a.inMeterTokens(id, e)) }
	}
	res, err := a.ContextManager.Compact(ctx, id, focus, inMeter)
	res.Event = a.inMeterTokens(id, res.Event)
	return res, err
}

// compactionEvents is the emitter of session id's compactions: each event goes to the agent's listeners, its
// tokens counted as the meter counts them.
func (a *Agent) compactionEvents(id string) compaction.Emitter {
	return func(e compaction.Event) {
		a.emit(Event{Session: id, Kind: EventCompaction, Compaction: a.inMeterTokens(id, e)})
	}
}

// inMeterTokens is e, when a completed compaction, with the request's tokens before and after counted as the
// meter counts them: by the chars per token of the provider's last report when there is one (else as e has
// them, at about 4 chars a token), so that the compaction's sentence and the meter give one figure.
func (a *Agent) inMeterTokens(id string, e compaction.Event) compaction.Event {
	if e.Type != compaction.EventCompleted || e.AfterTokens == 0 {
		return e
	}
	sess, err := a.Store.Session(id)
	if err != nil {
		return e
	}
	if cpt := a.calibration(sess).CharsPerToken; cpt > 0 {
		tools := a.ToolsChars()
		e.BeforeTokens, e.AfterTokens = int(float64(e.BeforeChars+tools)/cpt), int(float64(e.AfterChars+tools)/cpt)
	}
	return e
}

// SetSettings changes the configuration (from the next model call) and discards the background summaries,
// written for the settings before.
func (a *Agent) SetSettings(cfg config.Config) {
	a.ContextManager.SetSettings(cfg)
	a.discardAllAhead()
}

// Recover is Recover on the agent's store, after any turn of that session in progress.
func (a *Agent) Recover(id string, acknowledge bool) ([]transcript.ToolCall, error) {
	st := a.state(id)
	defer a.shared.lockTurn(a.Store, id)()
	defer st.forgetMeter()
	st.discardAhead()
	return Recover(a.Store, id, acknowledge)
}

// unfinishedTurn reports whether the last turn of msgs was started by text and stopped before the model's
// final answer (its last message is that prompt or a tool result).
func unfinishedTurn(msgs []transcript.Message, text string) bool {
	starts := transcript.TurnStarts(msgs)
	if len(starts) == 0 || msgs[starts[len(starts)-1]].Text != text {
		return false
	}
	last := msgs[len(msgs)-1]
	return last.StartsTurn() || last.Role == transcript.RoleTool
}

// RecoveryNote is the result recorded for an uncertain call (U2).
const RecoveryNote = "The outcome of this tool call is unknown: no result was recorded for it (the agent stopped while it was running, or the session was imported without it), so it may or may not have taken effect. Nothing was undone or retried. Verify the current state before relying on it or running it again."

// Recover lists the uncertain calls of session id and, with acknowledge, records RecoveryNote as their results
// (U2), each placed right after its call's other results so that the transcript stays valid for every
// provider. Without acknowledge it changes nothing.
func Recover(store *storage.Store, id string, acknowledge bool) ([]transcript.ToolCall, error) {
	v, err := store.Transcript(id)
	if err != nil {
		return nil, err
	}
	calls := transcript.UnansweredCalls(v.Messages)
	if !acknowledge || len(calls) == 0 {
		return calls, nil
	}
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), InsertAfter: map[int][]transcript.Message{}}
	for _, c := range calls {
		pos := resultSlot(v.Messages, c.ID)
		rw.InsertAfter[pos] = append(rw.InsertAfter[pos], transcript.Message{Role: transcript.RoleTool, ToolCallID: c.ID,
			ToolName: c.Name, Text: RecoveryNote, IsError: true})
	}
	if _, err := store.Apply(id, rw); err != nil {
		return nil, fmt.Errorf("recording the recovery: %w", err)
	}
	return calls, nil
}

// resultSlot is the position after which call's result belongs: after the assistant message that issued it
// and the results of that message's other calls that follow it. An unanswered call is the latest use of its
// ID (IDs may be reused once answered), so the search runs backwards.
func resultSlot(msgs []transcript.Message, callID string) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID != callID {
				continue
			}
			ids := map[string]bool{}
			for _, c := range msgs[i].ToolCalls {
				ids[c.ID] = true
			}
			pos := i
			for pos+1 < len(msgs) && msgs[pos+1].Role == transcript.RoleTool && ids[msgs[pos+1].ToolCallID] {
				pos++
			}
			return pos
		}
	}
	return len(msgs) - 1
}

// New builds the agent for the workspace at dir with cfg: the configured provider, its context window (from
// the settings, else the provider's model list), and the built-in tools; SyncMCP adds the MCP servers'.
func New(ctx context.Context, shared *Shared, store *storage.Store, cfg config.Config, dir string, log *zap.Logger, opts provider.Options) (*Agent, error) {
	if log == nil {
		log = zap.NewNop()
	}
	if shared == nil {
		shared = NewShared()
	}
	p, _ := cfg.ActiveProvider()
	model, err := provider.Open(p, opts)
	if err != nil {
		return nil, err
	}
	window, source := shared.ResolveWindow(ctx, cfg, model, log)
	a, err := newAgent(shared, store, cfg, dir, model, relevantfiles.NewTracker())
	if err != nil {
		return nil, err
	}
	a.Chat, a.Log, a.Window, a.WindowSource = model, log, window, source
	if p.PromptCache != "off" { // "off": requests built as before prompt caching, the summarizer's included
		a.Summarizer = cacheAwareSummarizer{standalone: model, chat: model, tools: a.Tools.Specs, window: func(id string) int { return summarizerWindow(a.budgetOf(id)) }, log: log}
	}
	return a, nil
}

// NewContextOnly builds an agent without a provider: status, manual compaction (offline summarizer) and the
// tool catalog work; Prompt fails with directions to configure a provider.
func NewContextOnly(shared *Shared, store *storage.Store, cfg config.Config, dir string, files *relevantfiles.Tracker) (*Agent, error) {
	p, source := cfg.ActiveProvider()
	a, err := newAgent(shared, store, cfg, dir, compaction.Offline{}, files)
	if err == nil {
		a.Window, a.WindowSource = p.ContextWindow, source
	}
	return a, err
}

// newAgent builds the agent with shared (nil: one of its own).
func newAgent(shared *Shared, store *storage.Store, cfg config.Config, dir string, s compaction.Summarizer, files *relevantfiles.Tracker) (*Agent, error) {
	if shared == nil {
		shared = NewShared()
	}
	ts, err := builtinTools(cfg, dir)
	if err != nil {
		return nil, err
	}
	if store != nil {
		ts.DaemonSocket = osproc.DaemonSocket(filepath.Dir(store.Dir()))
	}
	a := &Agent{Tools: ts, Log: zap.NewNop(), shared: shared}
	a.ContextManager.Workspace = dir
	a.ContextManager.init(store, cfg, s, ts.CatalogChars())
	a.UseFiles(files)
	ts.Recall = a.recall
	return a, nil
}

// builtinTools are the agent's own tools in workspace dir, with the shell as cfg allows it.
func builtinTools(cfg config.Config, dir string) (*tools.Set, error) {
	limits := tools.DefaultLimits()
	limits.Shell = cfg.Tools.Shell
	return tools.New(dir, limits)
}

// UseFiles makes files the tracker of the files the agent's tools read and edit, and the source of the
// checkpoint's relevantFiles.
func (a *Agent) UseFiles(files *relevantfiles.Tracker) {
	a.Files = files
	a.Tools.OnFile = func(u tools.FileUse) {
		use := relevantfiles.Read
		if u.Edited {
			use = relevantfiles.Edited
		}
		files.Note(filepath.ToSlash(u.Path), use)
	}
}

// largestSources are the n sources of the tool catalog that weigh most, for the catalog error.
func (a *Agent) largestSources(n int) []compaction.CatalogSource {
	var out []compaction.CatalogSource
	for _, src := range a.Tools.Describe().Sources {
		if src.Count > 0 {
			out = append(out, compaction.CatalogSource{Name: src.Source, Tools: src.Count, Chars: src.Chars})
		}
	}
	slices.SortStableFunc(out, func(x, y compaction.CatalogSource) int { return y.Chars - x.Chars })
	return out[:min(n, len(out))]
}

// tokensOf is the provider-reported tokens of every reply stored in sess (C4).
func tokensOf(sess storage.Session) int {
	if sess.Head.Totals == nil {
		return 0
	}
	return sess.Head.Totals.Tokens
}
