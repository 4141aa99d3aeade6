package main

import (
	"encoding/json"

	"strings"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/storage"
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
	window, source := agent.ResolveWindow(contextOf(cmd), cfg, model, a.log)
	m := &agent.ContextManager{Store: st, Config: cfg, Summarizer: s, Window: window, WindowSource: source}
	if f != nil {
		m.SetToolsChars(f.toolsChars)
	}
	return m, nil
}

// events prints compaction events: JSON Lines with --json, readable lines otherwise.
func (a *app) events() compaction.Emitter {
	return func(e compaction.Event) {
		if a.jsonOut {
			raw, _ := json.Marshal(e)
			var fields map[string]any
			_ = json.Unmarshal(raw, &fields)
			delete(fields, "type")
			_ = a.emit(e.Type, fields)
			return
		}
		switch e.Type {
		case compaction.EventStarted:
			a.printf("● compaction started (%s%s): summarizing %d messages\n", e.Reason, ruleSuffix(e.Rule), e.SpanMessages)
		case compaction.EventCompleted:
			a.printf("✔ compaction completed in %d ms: %d → %d chars (≈ %d → %d tokens), %d messages (%d chars) replaced by a %d-char checkpoint",
				e.DurationMs, e.BeforeChars, e.AfterChars, e.BeforeTokens, e.AfterTokens, e.SpanMessages, e.SpanChars, e.CheckpointChars)
			if e.Chunks > 1 {
				a.printf(" in %d summarizer calls", e.Chunks)
			}
			a.printf("\n")
			if e.Partial {
				a.printf("  ⚠ partial checkpoint (missing: %s; recovered by a follow-up call: %s). %s\n",
					listOrNone(e.MissingFields), listOrNone(e.RecoveredFields), e.Message)
			}
		case compaction.EventReduced:
			a.printf("✂ context reduced: %d messages cut, %d → %d chars\n", e.Messages, e.BeforeChars, e.AfterChars)
		default:
			a.printf("✖ %s: %s\n", strings.ReplaceAll(e.Type, "_", " "), e.Message)
		}
	}
}

func ruleSuffix(r compaction.Rule) string {
	if r == "" {
		return ""
	}
	return ", rule " + string(r)
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

func (a *app) compactCommand() *cobra.Command {
	var focus string
	cmd := &cobra.Command{
		Use:   "compact SESSION",
		Short: "compact a session now: older messages become a checkpoint, recent turns stay verbatim",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(func(st *storage.Store) error {
				m, err := a.contextManager(st, cmd, nil)
				if err != nil {
					return err
				}
				_, err = m.Compact(cmd.Context(), args[0], focus, a.events())
				return err
			})
		},
	}
	cmd.Flags().StringVar(&focus, "focus", "", "what the checkpoint should focus on (added to the summarizer's instructions)")
	return cmd
}

func (a *app) contextCommand() *cobra.Command {
	var f contextFlags
	var apply bool
	cmd := &cobra.Command{
		Use:   "context SESSION",
		Short: "show the context meter and what the next model call would do (--apply: do it and save it)",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(func(st *storage.Store) error {
				m, err := a.contextManager(st, cmd, &f)
				if err != nil {
					return err
				}
				if apply {
					_, perr := m.Prepare(cmd.Context(), args[0], &compaction.Guard{}, a.events())
					if perr != nil {
						// F1: the reduction was saved; report the status, then the error.
						if err := a.printStatus(m, args[0]); err != nil {
							return err
						}
						return perr
					}
				}
				return a.printStatus(m, args[0])
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&apply, "apply", false, "run what the agent runs before a model call (compaction, reduction, last resort) and save it")
	fl.IntVar(&f.maxContextChars, "max-context-chars", 0, "override limits.maxContextChars")
	fl.IntVar(&f.contextWindow, "context-window", 0, "override the model's context window (tokens)")
	fl.Float64Var(&f.threshold, "threshold", 0, "override compaction.threshold (0.1–0.99)")
	fl.IntVar(&f.keepTurns, "keep-turns", 0, "override compaction.keepTurns (0–20)")
	fl.IntVar(&f.toolsChars, "tools-chars", 0, "size of the tool catalog to assume (chars)")
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
	a.printf("session     %s (%d messages)\n", s.Session, s.Messages)
	a.printf("used        %d of %d chars (%.0f%%): instructions %d + transcript %d; tool catalog %d (not counted)\n",
		s.UsedChars, s.HardLimit, 100*float64(s.UsedChars)/float64(s.HardLimit), s.InstructionsChars, s.TranscriptChars, s.ToolsChars)
	a.printf("request     ≈ %d tokens of a %d-token window (%s)\n", s.EstimatedTokens, s.Window, s.WindowSource)
	a.printf("threshold   %.2f — window rule at %.0f%%, chars rule at %.0f%%\n", s.Threshold, 100*s.WindowFraction, 100*s.CharsFraction)
	if len(s.UncertainCalls) > 0 {
		a.printf("uncertain   %s (recover before compacting)\n", strings.Join(s.UncertainCalls, ", "))
	}
	if s.LastCheckpointPartial {
		a.printf("checkpoint  partial (raise compaction.maxOutputTokens)\n")
	}
	next := s.NextAction
	if !s.Auto && strings.HasPrefix(next, "compact") {
		next = "none (automatic compaction is disabled)"
	}
	a.printf("next call   %s\n", next)
	return nil
}
