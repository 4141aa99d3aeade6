// Package agent orchestrates sessions: it ties the session store, the configuration, the compaction engine,
// the provider and the tools together. Agent runs turns (agent.go); ContextManager, in this file, is the
// context management every caller shares (the daemon, the CLI): the meter, manual compaction and the pre-call
// pipeline, each persisted atomically.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/agent/plugins"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ContextManager measures, compacts and reduces stored sessions.
type ContextManager struct {
	Store *storage.Store
	// Config is the configuration at construction; change it with SetSettings (safe while turns run).
	Config config.Config
	cfgMu  sync.RWMutex
	// Summarizer writes checkpoints; see NewSummarizer.
	Summarizer compaction.Summarizer
	// Instructions are the agent's own fixed instructions, sent with every request.
	Instructions string
	// toolsChars is the size of the serialized tool catalog (TC1); it changes with the MCP servers enabled.
	toolsChars atomic.Int64
	// Window is the model's context window in tokens (0: unknown) and WindowSource where it came from.
	Window       int
	WindowSource string
	// Files, when set, ranks the files the session used; they feed the checkpoint's relevantFiles (D4).
	Files *relevantfiles.Tracker
	// Workspace is the folder whose project rules (AGENTS.md) every request sends; rules keeps the file read.
	Workspace string
	rules     rulesFiles
	// measures are, by session, what the provider's refusals of requests over its window showed (overflow.go).
	measuresMu sync.Mutex
	measures   map[string]measure
}

// NewContextManager returns a context manager over store that counts what a daemon for workspace dir sends
// with every request: the agent's own instructions and its built-in tool catalog (MCP servers aside). The
// command line measures and compacts sessions with it, so that its figures are the editor's.
func NewContextManager(store *storage.Store, cfg config.Config, dir string, s compaction.Summarizer) *ContextManager {
	catalog := 0
	if ts, err := builtinTools(cfg, dir); err == nil {
		catalog = ts.CatalogChars()
		ts.Close()
	}
	m := &ContextManager{Workspace: dir}
	m.init(store, cfg, s, catalog)
	return m
}

func (m *ContextManager) init(store *storage.Store, cfg config.Config, s compaction.Summarizer, toolsChars int) {
	m.Store, m.Config, m.Summarizer, m.Instructions = store, cfg, s, DefaultInstructions
	m.SetToolsChars(toolsChars)
}

// Settings returns the configuration in force.
func (m *ContextManager) Settings() config.Config {
	m.cfgMu.RLock()
	defer m.cfgMu.RUnlock()
	return m.Config
}

// SetSettings changes the configuration; it takes effect at the next model call (A5).
func (m *ContextManager) SetSettings(cfg config.Config) {
	m.cfgMu.Lock()
	defer m.cfgMu.Unlock()
	m.Config = cfg
}

// NewSummarizer returns the summarizer for cfg: the configured provider, or the offline summarizer when no
// provider is configured. A configured provider that cannot be built is an error, never a silent fallback.
func NewSummarizer(cfg config.Config) (compaction.Summarizer, error) {
	p, _ := cfg.ActiveProvider()
	if p.Kind == "" {
		return compaction.Offline{}, nil
	}
	return provider.Open(p, provider.DefaultOptions())
}

// Status is the context meter of a session (D3).
type Status struct {
	Session  string `json:"session"`
	Messages int    `json:"messages"`
	// Epoch numbers the session's view: every compaction, reduction, undo or checkpoint edit raises it, so a
	// client that drew the conversation can tell that another window or the CLI rewrote it.
	Epoch uint64 `json:"epoch"`
	// UsedChars is instructions + transcript (what the hard limit counts); HardLimit is maxContextChars.
	UsedChars         int `json:"usedChars"`
	InstructionsChars int `json:"instructionsChars"`
	TranscriptChars   int `json:"transcriptChars"`
	ToolsChars        int `json:"toolsChars"`
	HardLimit         int `json:"hardLimit"`
	// EstimatedTokens is the full request (with the tool catalog) at chars/4; CalibratedTokens the same
	// request at the chars-per-token ratio the provider's reports showed; LastReportedTokens the prompt
	// tokens the provider reported for the last call (0 until known).
	EstimatedTokens    int     `json:"estimatedTokens"`
	CalibratedTokens   int     `json:"calibratedTokens"`
	LastReportedTokens int     `json:"lastReportedTokens"`
	Window             int     `json:"window"`
	WindowSource       string  `json:"windowSource"`
	Threshold          float64 `json:"threshold"`
	// CompactsAtTokens is the request size at which the window's compaction fires: Threshold × Window, or
	// less in a window too small to keep the reply's room (limits.maxOutputTokens) at that point.
	CompactsAtTokens int `json:"compactsAtTokens"`
	// WindowFraction and CharsFraction are how far each trigger rule is toward firing (1 = fires).
	WindowFraction float64 `json:"windowFraction"`
	CharsFraction  float64 `json:"charsFraction"`
	// NextAction says what the next model call will do first: "none", "compact (<rule>)", "reduce".
	NextAction            string   `json:"nextAction"`
	Auto                  bool     `json:"auto"`
	OverHardLimit         bool     `json:"overHardLimit"`
	LastCheckpointPartial bool     `json:"lastCheckpointPartial"`
	UncertainCalls        []string `json:"uncertainCalls"`
	// Usage is the input the provider reported over the session, with what its prompt cache read and wrote,
	// and the last reply's (nil until a reply reported a usage).
	Usage *storage.UsageTotals `json:"usage,omitempty"`
	// CompactingInBackground is set while the next compaction's summary is written in the background.
	CompactingInBackground bool `json:"compactingInBackground,omitempty"`
	// Rules are the project's rules every request sends (part of InstructionsChars); nil when there are none.
	Rules *ProjectRules `json:"rules,omitempty"`
}

// ToolsChars is the size of the tool catalog every request carries (TC1).
func (m *ContextManager) ToolsChars() int { return int(m.toolsChars.Load()) }

// SetToolsChars records the catalog's size, when its tools change.
func (m *ContextManager) SetToolsChars(n int) { m.toolsChars.Store(int64(n)) }

// SystemPrompt is what a request of session sess sends as instructions: the agent's own, the project's rules
// (AGENTS.md, read from disk), then the session's (an imported system prompt). The meter counts exactly this
// text.
func (m *ContextManager) SystemPrompt(sess storage.Session) string {
	parts := make([]string, 0, 2+len(sess.Instructions))
	if m.Instructions != "" {
		parts = append(parts, m.Instructions)
	}
	if r := m.Rules(); r.Text != "" {
		parts = append(parts, r.Text)
	}
	for _, s := range sess.Instructions {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Sizes are what a request of session sess carries: its system prompt (the agent's instructions and the
// session's), a transcript of transcriptChars chars and the tool catalog; the meter counts exactly these.
func (m *ContextManager) Sizes(sess storage.Session, transcriptChars int) compaction.Sizes {
	return compaction.Sizes{Instructions: utf8.RuneCountInString(m.SystemPrompt(sess)), Transcript: transcriptChars, Tools: m.ToolsChars()}
}

func (m *ContextManager) input(v storage.View) compaction.Input {
	sz := m.Sizes(v.Session, 0)
	return compaction.Input{View: v.Messages, BaseEpoch: v.Session.Head.Epoch, InstructionsChars: sz.Instructions, ToolsChars: sz.Tools}
}

func (m *ContextManager) budget() compaction.Budget { return m.budgetFor(m.Settings()) }

// budgetFor is the budget the settings cfg give with the known window.
func (m *ContextManager) budgetFor(cfg config.Config) compaction.Budget {
	return compaction.BudgetFor(cfg, m.Window, m.WindowSource)
}

// Bounds of ToolOutputCap: what a tool result may hold at least and at most, in chars.
const (
	minToolOutput = 2_000
	maxToolOutput = 30_000
)

// ToolOutputCap is the most one tool result may hold for the model in force: a sixteenth of the hard limit,
// between 2,000 and 30,000 chars. A small window then holds several reads in its kept turns instead of
// crossing the compaction threshold at every turn; the head and tail of a longer result are kept, with a
// note saying what was left out and how to read it.
func (m *ContextManager) ToolOutputCap() int {
	limit, _ := m.budget().HardLimit(m.ToolsChars())
	return min(max(limit/16, minToolOutput), maxToolOutput)
}

// options are the summarizer settings: the output budget and, for a model, the window its calls must fit.
func (m *ContextManager) options(sess storage.Session, reason compaction.Reason, focus string) compaction.Options {
	cfg := m.Settings()
	o := compaction.Options{KeepTurns: cfg.Compaction.KeepTurns, MaxOutputTokens: cfg.Compaction.MaxOutputTokens,
		Reason: reason, Focus: focus, Session: sess.ID, Workspace: sess.Workspace, Plugins: plugins.FromSettings(cfg, m.Store),
		SentSystem: m.SystemPrompt(sess)}
	b := m.budgetOf(sess.ID)
	limit, _ := b.HardLimit(m.ToolsChars())
	o.UserWordsChars = int(float64(limit) * cfg.Compaction.UserWords)
	if m.Files != nil {
		for _, e := range m.Files.Ranked(30) {
			o.RelevantFiles = append(o.RelevantFiles, compaction.RelevantFile{Path: e.Path, Reason: e.Use.String()})
		}
		o.DeletedFiles = m.Files.Deleted()
	}
	if _, offline := m.Summarizer.(compaction.Offline); !offline {
		o.SummarizerWindow = summarizerWindow(b) // compaction fits the calls to it
	}
	return o
}

// summarizerWindow is the window, in tokens, one summarizer call may fill: the model's when it is known.
// Otherwise maxContextChars only stands in for it (A2), and what is actually available is what each of the
// agent's own requests takes: the hard limit (about 4 chars a token) and the reply budget
// limits.maxOutputTokens; a small maxContextChars must not leave the summarizer too little room to compact.
// It is counted in chars/4 tokens, as the compaction sizes the calls: a provider measured to count more
// tokens (b.CharsPerToken) leaves fewer.
func summarizerWindow(b compaction.Budget) int {
	win, _ := b.EffectiveWindow()
	if !b.KnownWindow() {
		win += b.MaxOutputTokens
	}
	return int(float64(win) * b.CharsPerTokenInUse() / 4)
}

// Status measures session id from the totals its record keeps: one record read, however long the session.
func (m *ContextManager) Status(id string) (Status, error) {
	sess, err := m.Store.Session(id)
	if err != nil {
		return Status{}, err
	}
	return m.statusOf(sess, summarize(sess)), nil
}

// ContextPart is one kind of content of a transcript and its size in chars, for the editors' breakdown of
// what fills the context.
type ContextPart struct {
	Name  string `json:"name"`
	Chars int    `json:"chars"`
}

// ContextParts splits the chars of msgs by kind: the checkpoint (and, when it quotes them, the user's words
// it carries), user text, assistant text and calls, reasoning, then the tool output of each tool, largest first. They add up to transcript.TotalChars(msgs).
func ContextParts(msgs []transcript.Message) []ContextPart {
	var checkpoint, words, user, assistant, reasoning int
	tools := map[string]int{}
	for i := range msgs {
		m := &msgs[i]
		r := utf8.RuneCountInString(m.Reasoning)
		reasoning += r
		rest := m.Chars() - r
		switch {
		case m.Summary:
			w := min(compaction.UserWordsChars(m.Structured), rest)
			words += w
			checkpoint += rest - w
		case m.Role == transcript.RoleUser:
			user += rest
		case m.Role == transcript.RoleTool:
			name := m.ToolName
			if name == "" {
				name = "unknown"
			}
			tools["tool output: "+name] += rest
		default:
			assistant += rest
		}
	}
	parts := []ContextPart{{"checkpoint", checkpoint}, {"user text", user}, {"assistant text and calls", assistant}, {"reasoning", reasoning}}
	if words > 0 {
		parts = slices.Insert(parts, 1, ContextPart{"the user's words, quoted", words})
	}
	byTool := make([]ContextPart, 0, len(tools))
	for name, n := range tools {
		byTool = append(byTool, ContextPart{name, n})
	}
	sort.Slice(byTool, func(i, j int) bool {
		if byTool[i].Chars != byTool[j].Chars {
			return byTool[i].Chars > byTool[j].Chars
		}
		return byTool[i].Name < byTool[j].Name
	})
	return append(parts, byTool...)
}

// CurrentCheckpoint returns the checkpoint of session id's transcript (nil when it has none) and the session's
// record. A compaction puts its checkpoint first, so only the transcript's leading messages are read, however
// long the session.
func CurrentCheckpoint(store *storage.Store, id string) (*transcript.Message, storage.Session, error) {
	const step = 8
	var ck *transcript.Message
	for offset := 0; ; offset += step {
		p, err := store.ReadPage(id, false, offset, step)
		if err != nil {
			return nil, storage.Session{}, err
		}
		for i := range p.Messages {
			if !p.Messages[i].Summary {
				return ck, p.Session, nil
			}
			ck = &p.Messages[i]
		}
		if offset+len(p.Messages) >= p.Total {
			return ck, p.Session, nil
		}
	}
}

// viewSummary is what the meter needs of a transcript, so that it can be kept up to date without re-reading.
type viewSummary struct {
	// epoch and viewLen identify the stored transcript it describes.
	epoch       uint64
	viewLen     int
	meter       compaction.Meter
	lastPartial bool
	uncertain   []string
}

// summarize is the summary of a stored session's transcript as its record (from the store) counts it.
func summarize(sess storage.Session) viewSummary {
	t := sess.Head.Totals
	return viewSummary{epoch: sess.Head.Epoch, viewLen: sess.Head.ViewLen, meter: *compaction.MeterAt(t.Chars),
		lastPartial: t.LastPartial, uncertain: append([]string{}, t.Open...)}
}

// add accounts for messages appended after the summary was taken; calls they issue are in flight, not
// uncertain.
func (sum *viewSummary) add(msgs ...transcript.Message) {
	sum.meter.Add(msgs...)
	for i := range msgs {
		if msgs[i].Summary {
			sum.lastPartial = msgs[i].Partial
		}
	}
	sum.viewLen += len(msgs)
}

func (m *ContextManager) statusOf(sess storage.Session, sum viewSummary) Status {
	sizes := m.Sizes(sess, sum.meter.Chars())
	cfg := m.Settings()
	d := compaction.Decide(sizes, m.budgetOf(sess.ID))
	st := Status{Session: sess.ID, Messages: sum.viewLen, Epoch: sess.Head.Epoch, UsedChars: sizes.Reducible(), InstructionsChars: sizes.Instructions,
		TranscriptChars: sizes.Transcript, ToolsChars: sizes.Tools, HardLimit: d.HardLimit,
		EstimatedTokens: d.RequestTokens, Window: d.Window, WindowSource: d.WindowSource, Threshold: cfg.Compaction.Threshold,
		CompactsAtTokens: d.CompactsAtTokens, WindowFraction: d.WindowFraction, CharsFraction: d.CharsFraction, Auto: cfg.Compaction.Auto,
		OverHardLimit: d.OverHardLimit, LastCheckpointPartial: sum.lastPartial, UncertainCalls: sum.uncertain}
	if sess.Head.Totals != nil {
		st.Usage = sess.Head.Totals.Usage
	}
	if r := m.Rules(); r.File != "" {
		st.Rules = &r
	}
	switch {
	case d.Compact && cfg.Compaction.Auto:
		st.NextAction = "compact (" + string(d.Rule) + ")"
	case d.OverHardLimit:
		st.NextAction = "reduce"
	default:
		st.NextAction = "none"
	}
	return st
}

// NewSession creates a session of workspace titled title. With the memory plugin on, it starts with the
// workspace's memories in its instructions (PH3).
func (m *ContextManager) NewSession(title, workspace string) (storage.Session, error) {
	if err := checkLength("session title", title, MaxTitleChars); err != nil {
		return storage.Session{}, err
	}
	sess, err := m.newRecord(title, workspace)
	if err != nil {
		return storage.Session{}, err
	}
	return m.Store.CreateSession(sess, nil)
}

// newRecord is the record a new session of workspace starts from, not yet stored.
func (m *ContextManager) newRecord(title, workspace string) (storage.Session, error) {
	sess := storage.Session{Title: title, Workspace: workspace}
	if cfg := m.Settings(); cfg.Memory.Enabled {
		ms, err := m.Store.Memories(workspace)
		if err != nil {
			return storage.Session{}, err
		}
		if text, _ := plugins.Render(ms, cfg.Memory.MaxChars); text != "" {
			sess.Instructions = []string{text}
		}
	}
	return sess, nil
}

// FirstRequestStatus is the meter of a workspace that has no session yet: what its first request will hold
// (the instructions and the tool catalog), with no session ID and no messages.
func (m *ContextManager) FirstRequestStatus(workspace string) (Status, error) {
	sess, err := m.newRecord("", workspace)
	if err != nil {
		return Status{}, err
	}
	st := m.statusOf(sess, viewSummary{})
	st.CalibratedTokens = st.EstimatedTokens
	return st, nil
}

// Compact runs a manual compaction of session id with an optional focus (C3) and persists it atomically.
func (m *ContextManager) Compact(ctx context.Context, id, focus string, emit compaction.Emitter) (compaction.Result, error) {
	if err := checkLength("compaction focus", focus, MaxFocusChars); err != nil {
		return compaction.Result{}, err
	}
	v, err := m.Store.Transcript(id)
	if err != nil {
		return compaction.Result{}, err
	}
	in, opts := m.input(v), m.options(v.Session, compaction.ReasonManual, focus)
	// A session whose recent turns cannot fit its hard limit, even reduced, is compacted deeper, keeping the
	// recent turns that fit: the keepTurns cut would leave it over the limit, with every prompt refused.
	limit, _ := m.budgetOf(id).HardLimit(in.ToolsChars)
	opts.KeepTurns, opts.WithinLastTurn = compaction.FittingSpanOptions(v.Messages, opts.KeepTurns, in.InstructionsChars, limit)
	opts.HardLimit = limit
	held := holdDone(emit)
	res, err := compaction.Compact(ctx, in, opts, m.Summarizer, held.Emitter())
	if err != nil {
		held.release(nil)
		return res, err
	}
	if _, err := m.Store.Apply(id, res.Rewrite); err != nil {
		held.release(err)
		return res, fmt.Errorf("saving the compaction: %w", err)
	}
	held.release(nil)
	return res, nil
}

// Prepare does what the agent does before a model call — triggers, compaction, reduction, last resort — and
// persists the result atomically, the reduction included when the F1 error is returned.
func (m *ContextManager) Prepare(ctx context.Context, id string, g *compaction.Guard, emit compaction.Emitter) (compaction.Prepared, error) {
	v, err := m.Store.Transcript(id)
	if err != nil {
		return compaction.Prepared{}, err
	}
	p, err := m.prepare(ctx, v, nil, g, emit, nil)
	return p.Prepared, err
}

// prepared is a Prepared whose view is the stored one (read back after a rewrite, so with stored IDs), its
// summary, and the size of the request it makes.
type prepared struct {
	compaction.Prepared
	view  storage.View
	sum   viewSummary
	chars int
}

// prepare runs the pre-call pipeline on v, the current stored transcript, and persists what it changed. sum
// is v's summary when the caller keeps one up to date (its running size makes the decision O(1)); nil has it
// measured. ahead, when not nil, is a background summary the automatic compaction takes if it still applies.
func (m *ContextManager) prepare(ctx context.Context, v storage.View, sum *viewSummary, g *compaction.Guard, emit compaction.Emitter, ahead *compaction.Ahead) (prepared, error) {
	id := v.Session.ID
	if sum == nil {
		s := summarize(v.Session)
		sum = &s
	}
	in := m.input(v)
	meter := sum.meter
	in.Meter = &meter
	opts := m.options(v.Session, compaction.ReasonAuto, "")
	opts.Ahead = ahead
	held := holdDone(emit)
	p, perr := compaction.Prepare(ctx, in, m.Settings(), m.budgetOf(id), opts, m.Summarizer, g, held.Emitter())
	var budgetErr *compaction.BudgetError
	var catalogErr *compaction.CatalogError
	if perr != nil && !errors.As(perr, &budgetErr) && !errors.As(perr, &catalogErr) {
		held.release(perr) // nothing is applied
		return prepared{Prepared: p}, perr
	}
	out := prepared{Prepared: p, view: v, sum: *sum, chars: in.InstructionsChars + meter.Chars() + in.ToolsChars}
	if p.Changed {
		if _, err := m.Store.Apply(id, p.Rewrite); err != nil {
			held.release(err)
			return out, fmt.Errorf("saving the compacted transcript: %w", err)
		}
		held.release(nil)
		v, err := m.Store.Transcript(id)
		if err != nil {
			return out, err
		}
		out.view, out.View, out.sum = v, v.Messages, summarize(v.Session)
		out.chars = in.InstructionsChars + out.sum.meter.Chars() + in.ToolsChars
	}
	held.release(nil) // nothing to save: whatever was held is sent as it is
	return out, perr
}

// The longest free texts the user can give besides prompts: a session title, and the focus of a manual
// compaction (it goes into the summarizer's instructions).
const (
	MaxTitleChars = 200
	MaxFocusChars = 2000
)

// checkLength refuses a text (what names it) of more than limit characters.
func checkLength(what, text string, limit int) error {
	if n := utf8.RuneCountInString(text); n > limit {
		return fmt.Errorf("the %s is %d characters long; it can be at most %d: shorten it", what, n, limit)
	}
	return nil
}

// MemoriesSent is how many of the workspace's memories ms (oldest first) a request sends within maxChars
// (memory.maxChars): the newest that fit.
func MemoriesSent(ms []storage.Memory, maxChars int) int {
	_, n := plugins.Render(ms, maxChars)
	return n
}
