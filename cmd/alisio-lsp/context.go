package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// contextFlags are the budget overrides of the context command.
type contextFlags struct {
	maxContextChars, contextWindow, keepTurns, toolsChars int
	threshold                                             float64
}

// contextManager builds the context manager over st with the configuration and flag overrides.
func (a *app) contextManager(st *storage.Store, cmd *cobra.Command, f *contextFlags) (*agent.ContextManager, error) {
	cfg := a.cfg
	if f != nil {
		overlay := map[string]map[string]any{"compaction": {}, "limits": {}, "provider": {}}
		if cmd.Flags().Changed("max-context-chars") {
			overlay["limits"]["maxContextChars"] = f.maxContextChars
		}
		if cmd.Flags().Changed("threshold") {
			overlay["compaction"]["threshold"] = f.threshold
		}
		if cmd.Flags().Changed("keep-turns") {
			overlay["compaction"]["keepTurns"] = f.keepTurns
		}
		if cmd.Flags().Changed("context-window") {
			overlay["provider"]["contextWindow"] = f.contextWindow
		}
		raw, _ := json.Marshal(overlay)
		var err error
		if cfg, err = config.Overlay(cfg, raw, "flags"); err != nil {
			return nil, err
		}
	}
	s, err := agent.NewSummarizer(cfg)
	if err != nil {
		return nil, err
	}
	model, _ := s.(provider.Model) // nil for the offline summarizer
	window, source := agent.NewShared().ResolveWindow(contextOf(cmd), cfg, model, a.log)
	m := agent.NewContextManager(st, cfg, a.cwd, s)
	m.Window, m.WindowSource = window, source
	if f != nil && cmd.Flags().Changed("tools-chars") {
		m.SetToolsChars(f.toolsChars)
	}
	return m, nil
}

// events prints the compaction events of session: JSON Lines with --json (the daemon's alisio/event shape),
// readable lines otherwise.
func (a *app) events(session string) compaction.Emitter {
	return func(e compaction.Event) {
		if a.jsonOut {
			_ = a.emitValue(api.CompactionEvent(session, e))
			return
		}
		symbol := map[string]string{compaction.EventStarted: "●", compaction.EventCompleted: "✔", compaction.EventReduced: "✂"}[e.Type]
		if symbol == "" {
			symbol = "✖"
		}
		a.printf("%s %s\n", symbol, api.Summary(e))
		if e.Type == compaction.EventCompleted {
			// The figures behind the sentence, for the terminal.
			a.printf("  ≈ %s → %s tokens · %s messages (%s chars) → a %s-char checkpoint · %d summarizer call(s) · %s ms",
				thousands(e.BeforeTokens), thousands(e.AfterTokens), thousands(e.SpanMessages), thousands(e.SpanChars),
				thousands(e.CheckpointChars), max(e.Chunks, 1), thousands(int(e.DurationMs)))
			if e.Partial {
				a.printf(" · missing: %s; recovered by a follow-up call: %s", listOrNone(e.MissingFields), listOrNone(e.RecoveredFields))
			}
			a.printf("\n")
		}
	}
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func (a *app) compactCommand() *cobra.Command {
	var focus string
	var undo bool
	cmd := &cobra.Command{
		Use:   "compact SESSION",
		Short: "compact a session now: older messages become a checkpoint, recent turns stay verbatim (--undo: undo the last one)",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if undo && focus != "" {
				return errors.New("--undo and --focus cannot be combined: --undo undoes the last compaction, --focus steers a new one")
			}
			ctx, stop := signal.NotifyContext(contextOf(cmd), osproc.StopSignals()...)
			defer stop()
			return a.withSession(ctx, args[0], func(st *storage.Store, id string) error {
				m, err := a.contextManager(st, cmd, nil)
				if err != nil {
					return err
				}
				if undo {
					return a.undoCompaction(m, id)
				}
				_, err = m.Compact(ctx, id, focus, a.events(id))
				switch {
				case err != nil && ctx.Err() != nil:
					return errors.New("the compaction was stopped: the session is as it was")
				case !a.jsonOut && (errors.Is(err, compaction.ErrNothingToSummarize) || errors.Is(err, compaction.ErrNoGain)):
					return exitCode(1) // its "compaction skipped" line said why
				}
				return err
			})
		},
	}
	cmd.Flags().StringVar(&focus, "focus", "", "what the checkpoint should focus on (added to the summarizer's instructions)")
	cmd.Flags().BoolVar(&undo, "undo", false, "undo the session's last compaction, trim or checkpoint edit instead: its transcript as it was before, with the messages added since")
	return cmd
}

// undoCompaction undoes session id's last compaction and says what it did (with --json, the
// alisio/undoCompaction result).
func (a *app) undoCompaction(m *agent.ContextManager, id string) error {
	res, err := m.UndoCompaction(id)
	if err != nil {
		return err
	}
	out := api.UndoCompactionResult{Session: id, CompactionUndo: res, Message: api.UndoSentence(res, id, api.ShellWords(a.cli()))}
	if a.jsonOut {
		var fields map[string]any
		raw, _ := json.Marshal(out)
		_ = json.Unmarshal(raw, &fields)
		return a.emit("compaction_undone", fields)
	}
	a.printf("↶ %s\n", out.Message)
	return nil
}

func (a *app) contextCommand() *cobra.Command {
	var f contextFlags
	var apply bool
	cmd := &cobra.Command{
		Use:   "context SESSION",
		Short: "show the context meter and what the next model call would do (--apply: do it and save it)",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				m, err := a.contextManager(st, cmd, &f)
				if err != nil {
					return err
				}
				// The project rules are the session's workspace's, wherever the command runs.
				if sess, err := st.Session(id); err == nil && sess.Workspace != "" {
					if fi, err := os.Stat(sess.Workspace); err == nil && fi.IsDir() {
						m.Workspace = sess.Workspace
					}
				}
				if apply {
					_, perr := m.Prepare(cmd.Context(), id, &compaction.Guard{}, a.events(id))
					if perr != nil {
						// F1: the reduction was saved; report the status, then the error.
						if err := a.printStatus(m, id); err != nil {
							return err
						}
						return perr
					}
				}
				return a.printStatus(m, id)
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&apply, "apply", false, "run what the agent runs before a model call (compaction, reduction, last resort) and save it")
	fl.IntVar(&f.maxContextChars, "max-context-chars", 0, "override limits.maxContextChars")
	fl.IntVar(&f.contextWindow, "context-window", 0, "override the model's context window (tokens)")
	fl.Float64Var(&f.threshold, "threshold", 0, "override compaction.threshold (0.1–0.99)")
	fl.IntVar(&f.keepTurns, "keep-turns", 0, "override compaction.keepTurns (0–20)")
	fl.IntVar(&f.toolsChars, "tools-chars", 0, "size of the tool catalog to assume, in chars (default: the built-in tools')")
	return cmd
}

func (a *app) printStatus(m *agent.ContextManager, id string) error {
	s, err := m.Status(id)
	if err != nil {
		return err
	}
	if a.jsonOut {
		raw, _ := json.Marshal(s)
		var fields map[string]any
		_ = json.Unmarshal(raw, &fields)
		return a.emit("status", fields)
	}
	cfg := m.Settings()
	thr := s.Threshold
	a.printf("session     %s (%d messages)\n", s.Session, s.Messages)
	a.printf("size        %s\n", sizeLine(compaction.Sizes{Instructions: s.InstructionsChars, Transcript: s.TranscriptChars, Tools: s.ToolsChars}))
	if r := s.Rules; r != nil && r.File != "" {
		a.printf("rules       %s: %s chars of the instructions, in every request (projectRules in the config)\n", r.File, thousands(r.Chars))
	}
	meter, source := api.MeterOf(s), "estimated at about 4 chars a token"
	if meter.TokensSource == "calibrated" {
		source = "calibrated from the provider's counts"
	}
	limit := ""
	if meter.LimitTokens != s.Window { // the chars rule's limit: the hard limit and the catalog sent beside it
		limit = fmt.Sprintf("; the limit is limits.maxContextChars's %s chars and the tool catalog's %s, ÷ 4", thousands(s.HardLimit), thousands(s.ToolsChars))
	}
	a.printf("tokens      %s of %s (%s%s)\n", thousands(meter.Tokens), thousands(meter.LimitTokens), source, limit)
	if meter.Cache != nil {
		a.printf("cache       %s\n", strings.TrimPrefix(meter.Cache.Text, "prompt cache: "))
	}
	if strings.HasPrefix(s.WindowSource, "maxContextChars") {
		a.printf("window      not known; counted as %s tokens (limits.maxContextChars ÷ 4)\n", thousands(s.Window))
	} else {
		a.printf("window      %s tokens (%s)\n", thousands(s.Window), api.WindowFrom(s.WindowSource))
	}
	if s.HardLimit < cfg.Limits.MaxContextChars {
		a.printf("limit       %s chars: what fits in that window at about 4 chars a token, after %s tokens kept for the reply (limits.maxContextChars, %s, is higher)\n",
			thousands(s.HardLimit), thousands(cfg.Limits.MaxOutputTokens), thousands(cfg.Limits.MaxContextChars))
	} else {
		a.printf("limit       %s chars (limits.maxContextChars)\n", thousands(s.HardLimit))
	}
	a.printf("            the session holds %.0f%% of it\n", 100*float64(s.UsedChars)/float64(max(s.HardLimit, 1)))
	if at := s.CompactsAtTokens; meter.CompactsAt < thr {
		a.printf("compaction  %s (at %s tokens; the request is at %.0f%% of that)", strings.TrimPrefix(meter.CompactsAtText, "compaction "), thousands(at), 100*s.WindowFraction)
	} else {
		a.printf("compaction  starts past %.0f%% of the window (%s tokens; the request is at %.0f%% of that)", 100*thr, thousands(int(thr*float64(s.Window))), 100*s.WindowFraction)
	}
	if s.HardLimit >= cfg.Limits.MaxContextChars { // else the window's point comes first
		a.printf(" or of limits.maxContextChars (%s chars; at %.0f%%)", thousands(int(thr*float64(cfg.Limits.MaxContextChars))), 100*s.CharsFraction)
	}
	a.printf("\n")
	for _, n := range api.Notices(s, api.ShellWords(a.cli())) {
		a.printf("notice      %s\n", n.Text)
	}
	a.printf("next call   %s\n", api.NextCall(s))
	return nil
}

// thousands writes n with comma separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// sizeLine says how big a request of a session is, as `context` and `sessions show` print it: every part
// it sends, the tool catalog included, so that the chars and the tokens count the same thing.
func sizeLine(sz compaction.Sizes) string {
	line := fmt.Sprintf("%s chars ≈ %s tokens: instructions %s + conversation %s", thousands(sz.Request()),
		thousands(transcript.EstimateTokens(sz.Request())), thousands(sz.Instructions), thousands(sz.Transcript))
	if sz.Tools > 0 {
		line += " + tool catalog " + thousands(sz.Tools)
	}
	return line
}
