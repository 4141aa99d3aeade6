// Package compaction decides when a session's transcript must be compacted or reduced and computes the
// result, without touching disk or network: the summarizer is an interface, and the output is a
// transcript.Rewrite that the store applies atomically.
//
// The entry points are Decide (the triggers, O(1) per model call), Compact (one compaction: boundary,
// summarizer calls, partial salvage, checkpoint) and Prepare (everything that runs before a model call:
// triggers, compaction, reduction, last resort, and the F1 error).
//
// What the caller must do with the results, as etcd raft asks of its Ready:
//
//   - A Result of Compact: apply Result.Rewrite to the store (storage.Store.Apply) in one atomic step, against
//     the epoch it was planned on (Rewrite.BaseEpoch); a store that moved on refuses it, and the compaction is
//     planned again on the new transcript, never merged. Result.View is what the transcript becomes; the
//     caller sends Result.Event on (it was emitted already) and nothing else changes.
//   - A Prepared of Prepare: when Changed, apply Prepared.Rewrite atomically before the model call, even when
//     Prepare also returned a *BudgetError (F1) or a *CatalogError (the reduction it made must not be lost);
//     then send Prepared.View, never the transcript as it was. On any other error, apply nothing.
//   - Keep one Guard per session across its model calls and call Guard.NewTurn at each user prompt: it is what
//     limits the last resort to once a turn and stops compaction loops.
//   - Errors and events carry data (BudgetError's chars and limit, UncertainError's call IDs); the sentences a
//     user reads are made by the caller's edge.
package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Errors that stop a compaction.
var (
	// ErrNothingToSummarize: there is no safe boundary that would summarize anything (compaction_skipped).
	ErrNothingToSummarize = errors.New("not enough history to compact: no safe boundary before the kept turns")
	// ErrUncertainCalls: the session has tool calls with an unknown outcome (G3); see UncertainError.
	ErrUncertainCalls = errors.New("session has uncertain tool calls")
	// ErrNoGain: the checkpoint would not be smaller than what it replaces, so the compaction is dropped.
	ErrNoGain        = errors.New("compaction would not shrink the conversation")
	errNothingUsable = errors.New("nothing usable")
)

// UncertainError lists the uncertain calls that block a compaction (G3), and names the session when the
// compaction knew it (Options.Session).
type UncertainError struct {
	CallIDs []string
	Session string
}

// Error names the calls; how to recover them is added by the edge that shows it (api.Explain).
func (e *UncertainError) Error() string {
	calls := "tool calls"
	if len(e.CallIDs) == 1 {
		calls = "tool call"
	}
	return fmt.Sprintf("the session has %d %s whose outcome is unknown (%s); it is not compacted until they are recovered",
		len(e.CallIDs), calls, strings.Join(e.CallIDs, ", "))
}

// Unwrap lets errors.Is match ErrUncertainCalls.
func (e *UncertainError) Unwrap() error { return ErrUncertainCalls }

// Input is the state a compaction works on.
type Input struct {
	// View is the effective transcript and BaseEpoch its store epoch (copied into the Rewrite).
	View      []transcript.Message
	BaseEpoch uint64
	// InstructionsChars and ToolsChars size the fixed parts of every request.
	InstructionsChars int
	ToolsChars        int
	// Meter, when set, holds the running size of View, so that Prepare decides in O(1) instead of rescanning.
	Meter *Meter
}

// transcriptChars is the size of in.View, from the meter when there is one.
func (in Input) transcriptChars() int {
	if in.Meter != nil {
		return in.Meter.Chars()
	}
	return transcript.TotalChars(in.View)
}

// Options tune one compaction.
type Options struct {
	KeepTurns int
	// MaxOutputTokens is the summarizer's output budget (compaction.maxOutputTokens).
	MaxOutputTokens int
	// SummarizerWindow is the context window, in tokens, of the model that summarizes (0: no bound, as for the
	// offline summarizer): each summarizer call's prompt and output budget fit it, a larger span is summarized
	// in chunks, and the output budget is lowered when it would leave too little room for the history.
	SummarizerWindow int
	// HardLimit is the hard limit the checkpoint is written for (0: none): the checkpoint may take at most a
	// quarter of it, whatever MaxOutputTokens allows (the offline summarizer sizes its checkpoint to that).
	HardLimit int
	Focus     string
	Reason    Reason
	Rule      Rule
	// WithinLastTurn moves the cut to the deepest G2 allows, inside the last turn at its last safe boundary
	// between calls (LastTurnSpan), when there is one: the budget compaction (L1) sets it when what the
	// keepTurns cut keeps cannot fit the hard limit.
	WithinLastTurn bool
	// RelevantFiles are the files the session used, ranked (edited, read, changed in the workspace); they are
	// merged into the checkpoint's relevantFiles after the summarizer's own. DeletedFiles are dropped from it.
	RelevantFiles []RelevantFile
	DeletedFiles  []string
	// Plugins extend the compaction (PH1); Session and Workspace are what their hooks are told.
	Plugins            []Plugin
	Session, Workspace string
	// SentSystem is the instructions the agent's requests send: with the messages, what a summarizer needs to
	// send the agent's own request again (SummaryRequest.Sent).
	SentSystem string
	// Ahead, for an automatic compaction, is a summary written in the background (SummarizeAhead): used when
	// the view still begins with its span.
	Ahead *Ahead
	// UserWordsChars is how many chars of the user's own messages a checkpoint quotes (compaction.userWords
	// of the hard limit; 0: none).
	UserWordsChars int
}

// maxRelevantFiles bounds the checkpoint's relevantFiles.
const maxRelevantFiles = 30

// complete finishes the summarizer's checkpoint of span before it is stored: it measures it against the span's
// ledger (cp.Fidelity) and merges in what it lacks, the files of the span's tool calls and the user's
// constraint sentences; adds the tracked files the summarizer did not name and drops deleted ones (D4); and
// carries the user's words, within opts.UserWordsChars and at most half of what the checkpoint saves, so that
// quoting them never stops a compaction from shrinking the conversation.
func complete(cp *Checkpoint, span []transcript.Message, opts Options, ext extension) {
	cp.Replaced = len(span)
	if len(span) > 0 && span[0].Summary {
		cp.Replaced-- // the previous checkpoint stands for its own
		if prev, err := ParseStructured(span[0].Structured); err == nil {
			cp.Replaced += prev.Replaced
		}
	}
	ledger := Extract(span)
	ledger.Extra = ext.anchors
	cp.Fidelity = ledger.Measure(cp)
	ledger.Merge(cp, cp.Fidelity)
	mergeRelevantFiles(cp, opts)
	saved := transcript.TotalChars(span) - utf8.RuneCountInString(cp.Render())
	carryUserWords(cp, span, min(opts.UserWordsChars, max(saved/2, 0)))
}

// mergeRelevantFiles adds the tracked files the summarizer did not name, while the list has fewer than
// maxRelevantFiles, and drops deleted ones (D4).
func mergeRelevantFiles(cp *Checkpoint, opts Options) {
	if len(opts.RelevantFiles) == 0 && len(opts.DeletedFiles) == 0 {
		return
	}
	var out []RelevantFile
	seen := map[string]bool{}
	for i, f := range append(append([]RelevantFile(nil), cp.RelevantFiles...), opts.RelevantFiles...) {
		tracked := i >= len(cp.RelevantFiles)
		if seen[f.Path] || contains(opts.DeletedFiles, f.Path) || tracked && (len(out) >= maxRelevantFiles || hasFile(out, f.Path)) {
			continue
		}
		seen[f.Path] = true
		out = append(out, f)
	}
	cp.RelevantFiles = out
}

// Result is a completed compaction.
type Result struct {
	Rewrite    transcript.Rewrite
	Checkpoint Checkpoint
	// View is the transcript after the rewrite.
	View  []transcript.Message
	Event Event
}

// Compact summarizes the older part of in.View into one checkpoint (C1, C2), keeping recent turns verbatim (G2)
// and never separating a call from its result (G1). It emits compaction_started and then compaction_completed,
// compaction_skipped or compaction_failed.
func Compact(ctx context.Context, in Input, opts Options, s Summarizer, emit Emitter) (Result, error) {
	start := time.Now()
	before := in.InstructionsChars + transcript.TotalChars(in.View)
	if calls := transcript.UnansweredCalls(in.View); len(calls) > 0 {
		err := &UncertainError{Session: opts.Session}
		for _, c := range calls {
			err.CallIDs = append(err.CallIDs, c.ID)
		}
		emit.emit(Event{Type: EventSkipped, Reason: opts.Reason, UncertainCalls: err.CallIDs, Message: err.Error()})
		return Result{}, err
	}
	span, ok := chooseSpan(in.View, opts)
	ahead := false
	if aspan, fits := opts.Ahead.spanOf(in.View); fits && opts.Reason == ReasonAuto && !opts.WithinLastTurn {
		span, ok, ahead = aspan, true, true
		s = replaying{s, opts.Ahead}
	}
	if !ok {
		emit.emit(Event{Type: EventSkipped, Reason: opts.Reason, Message: ErrNothingToSummarize.Error()})
		return Result{}, ErrNothingToSummarize
	}
	emit.emit(Event{Type: EventStarted, Reason: opts.Reason, Rule: opts.Rule, BeforeChars: before,
		BeforeTokens: transcript.EstimateTokens(before + in.ToolsChars), SpanMessages: span.End, SpanCheckpoint: span.End > 0 && in.View[0].Summary,
		Ahead: ahead})

	fail := func(err error) (Result, error) {
		ev := Event{Type: EventFailed, Reason: opts.Reason, Message: err.Error(), Error: err.Error(),
			DurationMs: time.Since(start).Milliseconds()}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			ev.Cause, ev.Message = CauseStopped, "stopped before it finished; the session is as it was"
		}
		emit.emit(ev)
		return Result{}, err
	}
	ext := beforeHooks(ctx, opts, emit)
	cp, stats, err := summarize(ctx, in.View[:span.End], opts, s, ext)
	if err != nil {
		return fail(err)
	}
	complete(&cp, in.View[:span.End], opts, ext)
	text := cp.Render()
	ckpt := transcript.Message{Role: transcript.RoleUser, Summary: true, Partial: cp.Partial, Text: text,
		Structured: cp.structured()}
	rw := transcript.Rewrite{BaseEpoch: in.BaseEpoch, BaseLen: len(in.View), Drop: span.End,
		Insert: []transcript.Message{ckpt}}
	after := rw.Apply(in.View)
	afterChars := in.InstructionsChars + transcript.TotalChars(after)
	if afterChars >= before {
		err := fmt.Errorf("%w: the checkpoint (%d chars) is not smaller than the %d messages it would replace; the recent turns it keeps verbatim hold most of it, and a compaction after a few more turns will shrink it (nothing is lost meanwhile)",
			ErrNoGain, utf8.RuneCountInString(text), span.End)
		emit.emit(Event{Type: EventSkipped, Reason: opts.Reason, BeforeChars: before, AfterChars: afterChars, Message: err.Error(),
			DurationMs: time.Since(start).Milliseconds()})
		return Result{}, err
	}
	// The plugins' context goes after the checkpoint's own content, in the same message: it is sent with it,
	// never cut, and replaced with it by the next compaction (whose plugins inject it again).
	if inject, reports := afterHooks(ctx, ext, opts, cp, stats.pluginFields, emit); len(inject) > 0 || len(reports) > 0 {
		stats.reports = reports
		if len(inject) > 0 {
			cp.Context = strings.Join(inject, "\n\n")
			text = cp.Render()
			rw.Insert[0].Text, rw.Insert[0].Structured = text, cp.structured()
			after = rw.Apply(in.View)
			afterChars = in.InstructionsChars + transcript.TotalChars(after)
			if afterChars >= before {
				// The plugins' context made it grow: the compaction is dropped as one that would not shrink.
				err := fmt.Errorf("%w: the checkpoint with the plugins' context (%d chars) is not smaller than the %d messages it would replace",
					ErrNoGain, utf8.RuneCountInString(text), span.End)
				emit.emit(Event{Type: EventSkipped, Reason: opts.Reason, BeforeChars: before, AfterChars: afterChars, Message: err.Error(),
					DurationMs: time.Since(start).Milliseconds(), Plugins: reports})
				return Result{}, err
			}
		}
	}
	ev := Event{Type: EventCompleted, Reason: opts.Reason, Rule: opts.Rule,
		BeforeChars: before, BeforeTokens: transcript.EstimateTokens(before + in.ToolsChars),
		AfterChars: afterChars, AfterTokens: transcript.EstimateTokens(afterChars + in.ToolsChars),
		SpanMessages: span.End, SpanCheckpoint: span.End > 0 && in.View[0].Summary, SpanChars: transcript.TotalChars(in.View[:span.End]),
		CheckpointChars: utf8.RuneCountInString(text), Chunks: stats.chunks, Partial: cp.Partial,
		MissingFields: cp.Missing, RecoveredFields: stats.recovered, TextOnly: cp.Text != "", Plugins: stats.reports,
		Fidelity:   cp.Fidelity,
		DurationMs: time.Since(start).Milliseconds(), Ahead: ahead}
	var notes []string
	if stats.loweredOutput > 0 {
		notes = append(notes, fmt.Sprintf("The summarizer's output budget was lowered from %d to %d tokens to leave room for the history in the model's window (compaction.maxOutputTokens).",
			opts.MaxOutputTokens, stats.loweredOutput))
	}
	if cp.Partial {
		notes = append(notes, "The checkpoint is partial: the summarizer's output budget cut it. Raise compaction.maxOutputTokens (now "+
			fmt.Sprint(opts.MaxOutputTokens)+") for complete checkpoints.")
	}
	ev.Message = strings.Join(notes, " ")
	emit.emit(ev)
	return Result{Rewrite: rw, Checkpoint: cp, View: after, Event: ev}, nil
}

// chooseSpan is FindSpan's cut, or LastTurnSpan's when opts.WithinLastTurn asks for it and there is one.
func chooseSpan(view []transcript.Message, opts Options) (Span, bool) {
	if opts.WithinLastTurn {
		if span, ok := LastTurnSpan(view); ok {
			return span, true
		}
	}
	return FindSpan(view, opts.KeepTurns)
}

type summaryStats struct {
	chunks    int
	recovered []string
	// loweredOutput is the output budget the summarizer calls used when it had to be lowered to leave room
	// for the history in the summarizer's window (0: not lowered).
	loweredOutput int
	// pluginFields are the plugins' output fields from the replies; reports what their AfterCompact said.
	pluginFields map[string]json.RawMessage
	reports      []PluginReport
}

// summarize turns span into a checkpoint, in chunks when it does not fit one summarizer call (oldest first,
// each chunk updating the running checkpoint), asking once more for fields a cut reply lost.
func summarize(ctx context.Context, span []transcript.Message, opts Options, s Summarizer, ext extension) (Checkpoint, summaryStats, error) {
	stats := summaryStats{pluginFields: map[string]json.RawMessage{}}
	sent := span // as the agent's requests sent it, the previous checkpoint included
	var prev *Checkpoint
	if len(span) > 0 && span[0].Summary {
		if cp, err := ParseStructured(span[0].Structured); err == nil {
			cp.UserWords, cp.UserWordsOmitted, cp.Fidelity, cp.Context = nil, 0, nil, "" // carried by code, not by the model
			prev, span = &cp, span[1:]
		}
	}
	out, input, lowered := callBudget(span, prev, opts)
	if lowered {
		stats.loweredOutput = out
	}
	opts.MaxOutputTokens = out
	chunks, err := chunk(span, prev, opts, input)
	if err != nil {
		return Checkpoint{}, stats, err
	}
	var cp Checkpoint
	for _, c := range chunks {
		stats.chunks++
		req := buildRequest(s, c, prev, opts.Focus, opts.MaxOutputTokens, nil)
		req.System, req.Schema, req.ExtraFields = ext.system(req.System), ext.schema(), ext.fieldNames()
		if len(chunks) == 1 {
			req.Sent, req.SentSystem, req.Session = sent, opts.SentSystem, opts.Session
		}
		reply, err := s.Summarize(ctx, req)
		if err != nil {
			return Checkpoint{}, stats, fmt.Errorf("summarizer: %w", err)
		}
		ext.collect(reply.Text, stats.pluginFields)
		cp, err = parseReply(reply.Text, reply.Truncated)
		if errors.Is(err, errNothingUsable) {
			if reply.Truncated {
				return Checkpoint{}, stats, fmt.Errorf("the summary was cut by the output budget before anything usable was written; raise compaction.maxOutputTokens (now %d) and compact again", opts.MaxOutputTokens)
			}
			return Checkpoint{}, stats, errors.New("the summarizer returned an empty reply")
		}
		if err != nil {
			return Checkpoint{}, stats, err
		}
		if cp.Text == "" && len(cp.Missing) > 0 {
			follow := buildRequest(s, c, prev, opts.Focus, opts.MaxOutputTokens, cp.Missing)
			if r2, err := s.Summarize(ctx, follow); err == nil {
				if cp2, err := parseReply(r2.Text, r2.Truncated); err == nil && cp2.Text == "" {
					stats.recovered = append(stats.recovered, cp.merge(cp2, cp.Missing)...)
				}
			}
			cp.Partial = cp.Partial || reply.Truncated
		}
		if prev != nil && cp.Text == "" {
			// The user's constraints survive every compaction, whatever the summarizer kept.
			cp.Instructions = union(prev.Instructions, cp.Instructions)
		}
		running := cp // a copy: cp is overwritten by the next chunk's reply, which must be merged with this one
		prev = &running
	}
	return cp, stats, nil
}

// minOutputTokens is the least output budget outputBudget lowers a model summarizer's to: below it a
// checkpoint holds too little to be worth writing.
const minOutputTokens = 256

// checkpointShare is the output budget, in tokens, of a checkpoint written for hardLimit: a quarter of it
// (about 4 chars a token); no bound when hardLimit is 0.
func checkpointShare(hardLimit int) int {
	if hardLimit <= 0 {
		return math.MaxInt
	}
	return max(hardLimit/16, 1)
}

// inputChars is what the prompt of a summarizer call may hold in a window of win tokens beside an output
// budget of out tokens: about 4 chars a token, with a 10% margin for the estimate.
func inputChars(win, out int) int { return (win - out) * 4 * 9 / 10 }

// callBudget is the output budget and the prompt size (0: no bound) of the summarizer calls for span:
// opts.MaxOutputTokens, at most the checkpoint's share of the hard limit and a quarter of the summarizer's
// window; when span needs several calls, lowered (lowered true; to no less than minOutputTokens) so that at
// least half of each prompt, and a chunk's worth, is left for the history beside the running checkpoint.
func callBudget(span []transcript.Message, prev *Checkpoint, opts Options) (out, input int, lowered bool) {
	out = min(opts.MaxOutputTokens, checkpointShare(opts.HardLimit))
	win := opts.SummarizerWindow
	if win <= 0 {
		return out, 0, false
	}
	out = min(out, max(win/4, minOutputTokens))
	fixed := promptFixedChars(opts)
	if fixed+checkpointChars(prev)+renderedTotal(span) <= inputChars(win, out) {
		return out, inputChars(win, out), false // one call: the output budget takes nothing from the history
	}
	// With input = 3.6 × (win − out): the checkpoint (4 × out) at most half of what the fixed part leaves,
	// and at least minChunkChars of history beside it.
	fits := min((36*win-10*fixed)/116, (36*win-10*fixed-10*minChunkChars)/76)
	if fits < out {
		out, lowered = max(fits, min(out, minOutputTokens)), true
	}
	return out, inputChars(win, out), lowered
}

// promptFixedChars is what every summarizer prompt holds besides history and checkpoint.
func promptFixedChars(opts Options) int {
	return utf8.RuneCountInString(summarizerSystem) + utf8.RuneCountInString(opts.Focus) + promptFraming
}

// Sizes the chunk planner reserves in a summarizer's prompt, in chars: the framing around the history and the
// checkpoint (tags, headings, the plugins' instructions), and the least history one of several calls must take.
const (
	promptFraming = 1000
	minChunkChars = 4000
)

// chunk splits span into pieces whose rendered prompt fits input chars (one piece when it is 0). The whole
// span goes in one call when it fits there with the instructions, the focus and prev, the checkpoint it
// updates; only several calls keep room in each for a running checkpoint as long as one reply (the output
// budget), so that a small summarizer window is not refused for a span it can take at once.
func chunk(span []transcript.Message, prev *Checkpoint, opts Options, input int) ([][]transcript.Message, error) {
	if input <= 0 {
		return [][]transcript.Message{span}, nil
	}
	fixed := promptFixedChars(opts)
	prevChars := checkpointChars(prev)
	if fixed+prevChars+renderedTotal(span) <= input {
		return [][]transcript.Message{span}, nil
	}
	room := input - fixed - max(prevChars, opts.MaxOutputTokens*4)
	if room < minChunkChars {
		return nil, fmt.Errorf("the summarizer's window (%d chars of input) is too small for one chunk of history after its %d-token output budget; use a model with a larger window, or raise limits.maxContextChars",
			input, opts.MaxOutputTokens)
	}
	var out [][]transcript.Message
	startIdx, size := 0, 0
	for i := range span {
		n := renderedSize(&span[i])
		if size+n > room && i > startIdx {
			out = append(out, span[startIdx:i])
			startIdx, size = i, 0
		}
		size += n
	}
	if startIdx < len(span) || len(out) == 0 {
		out = append(out, span[startIdx:])
	}
	return out, nil
}

// renderedTotal estimates the prompt chars span adds.
func renderedTotal(span []transcript.Message) int {
	n := 0
	for i := range span {
		n += renderedSize(&span[i])
	}
	return n
}

// checkpointChars is the size of cp in the prompt that updates it (0 when there is none).
func checkpointChars(cp *Checkpoint) int {
	if cp == nil {
		return 0
	}
	b, _ := json.Marshal(cp)
	return utf8.RuneCount(b)
}

// union returns a followed by the entries of b not in a.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, s := range b {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
