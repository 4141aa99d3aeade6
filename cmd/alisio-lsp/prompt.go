package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

func (a *app) promptCommand() *cobra.Command {
	var sessionID, workspace string
	var fresh bool
	cmd := &cobra.Command{
		Use:   "prompt [--session ID | --new] TEXT",
		Short: "run one agent turn with the configured provider, continuing the workspace's latest session (--new: a new one)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("missing TEXT, the prompt: usage: %s", cmd.UseLine())
			}
			if strings.TrimSpace(strings.Join(args, " ")) == "" {
				return fmt.Errorf("the prompt is empty: give the text to send (usage: %s)", cmd.UseLine())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(contextOf(cmd), osproc.StopSignals()...)
			defer stop()
			text := strings.Join(args, " ")
			return a.withStore(ctx, func(st *storage.Store) error {
				dir := a.workspaceDir(workspace)
				continued := false
				if sessionID == "" && !fresh {
					// As `codex exec resume --last`: the workspace's most recent session goes on.
					if latest, ok, err := latestSession(st, dir); err != nil {
						return err
					} else if ok {
						sessionID, continued = latest, true
					}
				}
				if sessionID != "" {
					id, err := resolveSession(st, sessionID)
					if err != nil {
						return err
					}
					sessionID = id
					sess, err := st.Session(id)
					if err != nil {
						return err
					}
					if workspace == "" && sess.Workspace != "" {
						dir = sess.Workspace
					}
				}
				ag, err := agent.New(ctx, nil, st, a.cfg, dir, a.log, provider.DefaultOptions())
				if err != nil {
					return err
				}
				defer ag.Close()
				ag.SyncMCP(ctx, a.cfg)
				if sessionID == "" {
					sess, err := ag.NewSession(agent.SessionTitle(text), ag.Tools.Dir())
					if err != nil {
						return err
					}
					sessionID = sess.ID
				}
				switch {
				case a.jsonOut:
					_ = a.emit("session", map[string]any{"id": sessionID, "continued": continued})
				case continued:
					fmt.Fprintf(a.stderr, "session %s (the workspace's latest, continued; --new starts another)\n", sessionID)
				default:
					fmt.Fprintf(a.stderr, "session %s\n", sessionID)
				}
				ag.OnEvent = a.agentEvents()
				res, err := ag.Prompt(ctx, sessionID, text)
				var steps *agent.StepLimitError
				switch {
				case errors.Is(err, agent.ErrModelCall):
					return fmt.Errorf("%w\nto resume the turn: %s prompt --session %s %s", err, a.cli(), sessionID, shellWord(text))
				case errors.As(err, &steps):
					return fmt.Errorf("%w\nto let it go on: %s prompt --session %s continue", err, a.cli(), sessionID)
				case err != nil:
					return err
				}
				if a.jsonOut {
					return a.emit("turn_completed", map[string]any{"session": sessionID, "reply": res.Reply, "modelCalls": res.ModelCalls, "cut": res.Cut})
				}
				a.printf("\n")
				if res.Cut {
					fmt.Fprintln(a.stderr, "alisio-lsp: the reply was cut by limits.maxOutputTokens; raise it for longer answers")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "continue this session (default: the workspace's most recent one)")
	cmd.Flags().BoolVar(&fresh, "new", false, "start a new session")
	cmd.MarkFlagsMutuallyExclusive("session", "new")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root for the tools (default: the session's, else the current directory)")
	return cmd
}

// latestSession is the most recently updated session of workspace dir, if it has one.
func latestSession(st *storage.Store, dir string) (string, bool, error) {
	all, err := st.Sessions(dir)
	if err != nil || len(all) == 0 {
		return "", false, err
	}
	latest := all[0]
	for _, s := range all[1:] {
		if s.UpdatedAt.After(latest.UpdatedAt) {
			latest = s
		}
	}
	return latest.ID, true, nil
}

func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// agentEvents prints a turn as it runs: streamed text, tool calls and results, compaction events.
// With --json every event but the streamed text is one line in the daemon's alisio/event shape; the text the
// assistant wrote before a tool call is a "text" line before it, and the reply comes whole in turn_completed.
func (a *app) agentEvents() func(agent.Event) {
	var text strings.Builder // with --json: the assistant's text since the last call, said before the next
	return func(e agent.Event) {
		if a.jsonOut {
			switch e.Kind {
			case agent.EventDelta:
				text.WriteString(e.Delta.Text)
			case agent.EventToolCall:
				if strings.TrimSpace(text.String()) != "" {
					_ = a.emit("text", map[string]any{"session": e.Session, "text": text.String()})
				}
				text.Reset()
			case agent.EventReply:
				text.Reset() // the reply comes whole in turn_completed
			}
			if ev, ok := api.EventOf(e); ok && e.Kind != agent.EventDelta && e.Kind != agent.EventReply {
				_ = a.emitValue(ev)
			}
			return
		}
		switch e.Kind {
		case agent.EventCompaction:
			a.events(e.Session)(e.Compaction)
		case agent.EventDelta:
			a.printf("%s", e.Delta.Text)
		case agent.EventToolCall:
			a.printf("\n→ %s %s\n", e.Call.Name, clip(e.Call.Arguments, 200))
		case agent.EventToolResult:
			a.printf("%s", indentLines(e.Result, 6, 160))
		}
	}
}

func (a *app) sessionsRecoverCommand() *cobra.Command {
	var ack bool
	cmd := &cobra.Command{
		Use:   "recover SESSION --acknowledge",
		Short: "record that the uncertain tool calls of a session have an unknown outcome, so it can continue",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				calls, err := agent.Recover(st, id, ack)
				if err != nil {
					return err
				}
				var ids []string
				for _, c := range calls {
					ids = append(ids, fmt.Sprintf("%s (%s %s)", c.ID, c.Name, clip(c.Arguments, 80)))
				}
				switch {
				case len(calls) == 0 && a.jsonOut:
					return a.emit("recovered", map[string]any{"session": id, "calls": 0})
				case len(calls) == 0:
					a.printf("session %s has no uncertain tool calls\n", id)
					return nil
				case !ack:
					return fmt.Errorf("%d uncertain tool call(s): %s. They may or may not have taken effect. Check, then run again with --acknowledge to record that their outcome is unknown (nothing is undone or retried)",
						len(calls), strings.Join(ids, "; "))
				}
				if a.jsonOut {
					return a.emit("recovered", map[string]any{"session": id, "calls": len(calls)})
				}
				a.printf("recorded an unknown outcome for %d call(s): %s\n", len(calls), strings.Join(ids, "; "))
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&ack, "acknowledge", false, "record the unknown outcome (without it, only list the calls)")
	return cmd
}

// indentLines is the start of text for the terminal: at most lines lines of at most width chars each,
// indented, and a line saying how many more there are.
func indentLines(text string, lines, width int) string {
	all := strings.Split(strings.TrimRight(text, "\n"), "\n")
	var b strings.Builder
	for i, l := range all {
		if i == lines {
			fmt.Fprintf(&b, "  … %d more lines\n", len(all)-lines)
			break
		}
		fmt.Fprintf(&b, "  %s\n", clip(l, width))
	}
	return b.String()
}
