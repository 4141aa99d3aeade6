package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Guard carries what Prepare must remember between model calls.
type Guard struct {
	// LastResortUsed is set once the budget compaction of L1 ran in this turn; reset it at each user prompt.
	LastResortUsed bool
	// quietUntil suppresses automatic compaction after one that did not lower the size meaningfully, until
	// the reducible size grows past it (no compaction loops).
	quietUntil int
}

// NewTurn resets the per-turn state.
func (g *Guard) NewTurn() { g.LastResortUsed = false }

// ineffectiveRatio: an automatic compaction that leaves more than this share of the size did not help.
const ineffectiveRatio = 0.9

// BudgetError is the F1 failure: the transcript cannot be brought under the hard limit.
type BudgetError struct {
	Chars, Limit int
	// Compaction says what compaction did: "ran but could not reduce it enough", "was skipped because there
	// is no safe boundary to summarize", "failed (<error>)" or "is disabled".
	Compaction string
	// Window, when the limit comes from the model's window (Budget.HardLimit), is that window in tokens, with
	// the reply reserve (tokens) and the tool catalog (chars) it leaves room for.
	Window, Reserve, ToolsChars int
}

// Error is the F1 message, exactly as SPEC F1 words it, saying where the limit comes from when it is the
// model's window; the ways to continue, which name the user's commands, are added by the edge that shows it
// (api.Explain).
func (e *BudgetError) Error() string {
	window := ""
	if e.Window > 0 {
		window = fmt.Sprintf("The limit is what fits the model's %d-token context window after the %d-token reply reserve (limits.maxOutputTokens) and the %d-char tool catalog. ",
			e.Window, e.Reserve, e.ToolsChars)
	}
	return strings.TrimSpace(fmt.Sprintf("Context budget exceeded (approximately %d characters of conversation; limit %d). Automatic compaction %s. %s",
		e.Chars, e.Limit, e.Compaction, window))
}

// CatalogError: the tool catalog leaves the conversation no room in the model's window. It is not the F1
// error, which the catalog never causes (TC1): the way out is fewer tools, not compaction.
type CatalogError struct {
	// ToolsChars is the catalog's size; Window and Reserve the model's window and the reply reserve, in tokens.
	ToolsChars, Window, Reserve int
	// Chars is what the conversation (instructions and transcript) needs, and Room what the window leaves it
	// beside the catalog and the reply reserve (≤ 0 when the catalog alone fills the window).
	Chars, Room int
	// Sources are the catalog's largest sources, most chars first, when the caller knows them.
	Sources []CatalogSource
}

// CatalogSource is one origin of tools (the built-in tools, an MCP server) and its share of the catalog.
type CatalogSource struct {
	Name         string
	Tools, Chars int
}

// Error says how much of the window the catalog takes and which sources weigh most; where to turn them off is
// added by the edge that shows it (api.Explain).
func (e *CatalogError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The tool catalog is too large for the model's context window: its tools take about %d characters (%d tokens) of the %d-token window",
		e.ToolsChars, transcript.EstimateTokens(e.ToolsChars), e.Window)
	if e.Room <= 0 {
		fmt.Fprintf(&b, ", which leaves no room for the conversation after the %d-token reply reserve (limits.maxOutputTokens).", e.Reserve)
	} else {
		fmt.Fprintf(&b, ", which leaves %d characters for the conversation after the %d-token reply reserve (limits.maxOutputTokens); it needs about %d even compacted.", e.Room, e.Reserve, e.Chars)
	}
	if len(e.Sources) > 0 {
		var parts []string
		for _, s := range e.Sources {
			parts = append(parts, fmt.Sprintf("%s (%d tools, %d characters)", s.Name, s.Tools, s.Chars))
		}
		b.WriteString(" Largest: " + strings.Join(parts, ", ") + ".")
	}
	return b.String()
}

// catalogError is the CatalogError for a request whose conversation needs chars, when the catalog is what
// keeps it out of the window: the catalog takes at least half the window, and the conversation would fit
// without it (nil otherwise, or when the window is unknown).
func catalogError(b Budget, toolsChars, chars int) *CatalogError {
	if !b.KnownWindow() || toolsChars == 0 {
		return nil
	}
	window := (b.Window - b.MaxOutputTokens) * 4
	if room := window - toolsChars; chars > room && 2*toolsChars >= window && chars <= min(window, b.MaxContextChars) {
		return &CatalogError{ToolsChars: toolsChars, Window: b.Window, Reserve: b.MaxOutputTokens, Chars: chars, Room: room}
	}
	return nil
}

// The F1 variants.
const (
	CompactionRanNotEnough = "ran but could not reduce it enough"
	CompactionNoBoundary   = "was skipped because there is no safe boundary to summarize"
	CompactionDisabled     = "is disabled"
)

// Prepared is what Prepare decided before a model call.
type Prepared struct {
	// Decision is the trigger evaluation on the transcript as it was.
	Decision Decision
	// Rewrite, when Changed, is the one atomic change to persist (compaction and reduction composed).
	Rewrite transcript.Rewrite
	Changed bool
	// View is the transcript to send (after the rewrite).
	View []transcript.Message
	// Compactions are the completed compactions, in order.
	Compactions []Result
}

// Prepare runs everything SPEC §3–4 asks before a model call: the triggers (A1–A5), an automatic compaction,
// the hard limit with in-place reduction (H1, R1–R6), the last-resort budget compaction (L1), and the F1 error.
// On F1 it returns the BudgetError together with a Prepared whose Rewrite (the reduction) must still be
// persisted; so too the CatalogError when only the tool catalog keeps the request out of the model's
// window. opts carries the summarizer settings (SummarizerWindow, MaxOutputTokens, else
// compaction.maxOutputTokens; Focus is ignored).
func Prepare(ctx context.Context, in Input, cfg config.Config, b Budget, opts Options, s Summarizer, g *Guard, emit Emitter) (Prepared, error) {
	sizes := Sizes{Instructions: in.InstructionsChars, Transcript: in.transcriptChars(), Tools: in.ToolsChars}
	p := Prepared{Decision: Decide(sizes, b), View: in.View}
	if !p.Decision.OverHardLimit && (!p.Decision.Compact || !cfg.Compaction.Auto || sizes.Reducible() <= g.quietUntil) {
		return p, nil // the common case: nothing to do, decided in O(1)
	}
	if ce := catalogError(b, in.ToolsChars, in.InstructionsChars); ce != nil {
		// The catalog leaves no room beside the instructions: no compaction can help, and none is run.
		ce.Chars = sizes.Reducible()
		return p, ce
	}
	p.Rewrite = transcript.Rewrite{BaseEpoch: in.BaseEpoch, BaseLen: len(in.View), Replace: map[int]transcript.Message{}}
	chars := sizes.Transcript // kept in step with p.View below
	opts.KeepTurns, opts.Focus, opts.HardLimit = cfg.Compaction.KeepTurns, "", p.Decision.HardLimit
	if opts.MaxOutputTokens <= 0 {
		opts.MaxOutputTokens = cfg.Compaction.MaxOutputTokens
	}

	compactionNote := CompactionDisabled
	compact := func(reason Reason, rule Rule) error {
		opts.Reason, opts.Rule = reason, rule
		cur := Input{View: p.View, InstructionsChars: in.InstructionsChars, ToolsChars: in.ToolsChars}
		res, err := Compact(ctx, cur, opts, s, emit)
		switch {
		case errors.Is(err, ErrNothingToSummarize):
			if compactionNote != CompactionRanNotEnough {
				compactionNote = CompactionNoBoundary
			}
		case errors.Is(err, ErrNoGain):
			compactionNote = CompactionRanNotEnough
			g.quietUntil = sizes.Reducible() + sizes.Reducible()/10
		case err != nil:
			compactionNote = "failed (" + err.Error() + ")"
		default:
			compactionNote = CompactionRanNotEnough
			p.apply(res.Rewrite)
			chars = res.Event.AfterChars - in.InstructionsChars
			p.Compactions = append(p.Compactions, res)
			if float64(res.Event.AfterChars) > ineffectiveRatio*float64(res.Event.BeforeChars) {
				g.quietUntil = res.Event.AfterChars + res.Event.AfterChars/10
			} else {
				g.quietUntil = 0
			}
		}
		return err
	}
	if cfg.Compaction.Auto {
		compactionNote = CompactionNoBoundary
		if p.Decision.Compact && sizes.Reducible() > g.quietUntil {
			compact(ReasonAuto, p.Decision.Rule)
		}
	}

	limit := p.Decision.HardLimit
	target := ReductionTarget(limit, in.InstructionsChars)
	reduce := func() bool {
		if in.InstructionsChars+chars <= limit {
			return true
		}
		red := Reduce(p.View, target)
		if len(red.Replace) > 0 {
			p.apply(transcript.Rewrite{BaseLen: len(p.View), Replace: red.Replace})
			emit.emit(Event{Type: EventReduced, Messages: len(red.Replace), BeforeChars: in.InstructionsChars + chars,
				AfterChars: in.InstructionsChars + red.Chars})
		}
		chars = red.Chars
		return in.InstructionsChars+chars <= limit
	}
	if reduce() {
		return p, nil
	}
	if cfg.Compaction.Auto && !g.LastResortUsed {
		g.LastResortUsed = true
		// L1 cuts as deep as G2 allows when that is what fits: at the keepTurns cut, unless what it keeps cannot
		// fit even reduced; then keeping fewer turns, down to the last one, and inside it at its last safe
		// boundary between calls. When the first cut left the transcript over (its checkpoint, no gain), once
		// more at the deepest.
		opts.KeepTurns, opts.WithinLastTurn = FittingSpanOptions(p.View, cfg.Compaction.KeepTurns, in.InstructionsChars, limit)
		err := compact(ReasonBudget, RuleNone)
		if reduce() {
			return p, nil
		}
		retry := err == nil || errors.Is(err, ErrNoGain)
		_, deeper := LastTurnSpan(p.View)
		if retry && (opts.KeepTurns > 1 || deeper && !opts.WithinLastTurn) {
			opts.KeepTurns, opts.WithinLastTurn = 1, deeper
			compact(ReasonBudget, RuleNone)
			if reduce() {
				return p, nil
			}
		}
	}
	if ce := catalogError(b, in.ToolsChars, in.InstructionsChars+chars); ce != nil {
		return p, ce // over only because of the catalog: the reduction above is still to be persisted
	}
	be := &BudgetError{Chars: in.InstructionsChars + chars, Limit: limit, Compaction: compactionNote}
	if p.Decision.HardLimitByWindow {
		be.Window, be.Reserve, be.ToolsChars = b.Window, b.MaxOutputTokens, in.ToolsChars
	}
	return p, be
}

// keptCanFit reports whether what FindSpan's cut of view keeps could fit limit once reduced, even beside a
// checkpoint of no size; when it cannot, only a deeper cut can bring the transcript under the hard limit.
func keptCanFit(view []transcript.Message, keepTurns, instructionsChars, limit int) bool {
	span, ok := FindSpan(view, keepTurns)
	if !ok {
		return true
	}
	kept := Reduce(view[span.End:], ReductionTarget(limit, instructionsChars))
	return instructionsChars+kept.Chars <= limit
}

// apply records rw (planned against p.View) into the composed rewrite and the current view.
func (p *Prepared) apply(rw transcript.Rewrite) {
	p.Rewrite = p.Rewrite.Then(rw)
	p.View = rw.Apply(p.View)
	p.Changed = true
}
