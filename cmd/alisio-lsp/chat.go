package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/chat"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

func (a *app) chatCommand() *cobra.Command {
	var sessionID, workspace string
	var fresh bool
	cmd := &cobra.Command{
		Use:   "chat [--workspace DIR] [--session ID | --new]",
		Short: "an interactive session in the terminal, through the shared daemon the editors use (/help inside lists its commands)",
		Long: "chat continues the workspace's most recent session (--session another, --new a new one) in the terminal: replies\n" +
			"stream as they are written, tool calls fold to one line, the meter stays at the bottom, Ctrl-C stops the turn\n" +
			"(twice: leave). It talks to the shared daemon the editors use, starting it when none runs; /help lists the\n" +
			"slash commands (/compact, /context, /mcps, /plugins, /settings, /sessions, /new, /recover, /undo, /exit).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sessionID != "" && fresh {
				return errors.New("--session continues a session and --new starts one: give one of them")
			}
			if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
				return errors.New("chat needs a terminal: for scripts use `alisio-lsp prompt TEXT` (it continues the same session)")
			}
			dir := a.workspaceDir(workspace)
			switch info, err := os.Stat(dir); {
			case errors.Is(err, fs.ErrNotExist):
				return fmt.Errorf("the workspace %s does not exist: give an existing project folder with --workspace", dir)
			case err != nil || !info.IsDir():
				return fmt.Errorf("the workspace %s is not a folder: give a project folder with --workspace", dir)
			}
			ctx, stop := signal.NotifyContext(contextOf(cmd), osproc.StopSignals()...)
			defer stop()
			fmt.Fprintln(a.stderr, "alisio-lsp: connecting to the shared daemon (it starts if none runs)…")
			client, wait, err := a.dialDaemon(ctx, dir)
			if err != nil {
				return err
			}
			if sessionID != "" {
				// An ID that names no session fails here, before the screen is taken, rather than opening another.
				found, err := chat.FindSession(ctx, client, sessionID)
				if err != nil {
					_ = client.Close()
					wait()
					return fmt.Errorf("%w (`alisio-lsp sessions list` lists them; --new starts one)", err)
				}
				sessionID = found.ID
				if workspace == "" && found.Workspace != "" && found.Workspace != dir {
					// The session's tools act in its own workspace, as `prompt --session` does, not in the
					// directory the chat was started from.
					_ = client.Close()
					wait()
					if info, err := os.Stat(found.Workspace); err != nil || !info.IsDir() {
						return fmt.Errorf("the session works in %s, which is no longer a folder: give --workspace DIR to continue it in another", found.Workspace)
					}
					fmt.Fprintf(a.stderr, "alisio-lsp: the session works in %s\n", found.Workspace)
					if client, wait, err = a.dialDaemon(ctx, found.Workspace); err != nil {
						return err
					}
				}
			}
			opts := chat.Options{Session: sessionID, New: fresh, Config: a.cfg, In: os.Stdin, Out: os.Stdout, Resume: a.chatCommandLine(workspace)}
			if a.configPath != "" {
				// The shared daemon may run with another file (another window started it): this chat's goes over it.
				if opts.Settings, err = os.ReadFile(a.path(a.configPath)); err != nil {
					_ = client.Close()
					wait()
					return fmt.Errorf("reading the config file: %w", err)
				}
			}
			runErr := chat.Run(ctx, client, opts)
			_ = client.Close()
			wait()
			return runErr
		},
	}
	cmd.Flags().StringVar(&sessionID, "session", "", "continue this session (an ID, or its first characters)")
	cmd.Flags().BoolVar(&fresh, "new", false, "start a new session")
	cmd.Flags().StringVar(&workspace, "workspace", "", "the project folder the agent works in (default: the session's with --session, else the current directory)")
	return cmd
}

// cli is the command that runs alisio-lsp as this process was run: with the data directory and configuration
// it was given, as absolute paths (quoted for a shell when they need to be). A command the CLI prints whole,
// with the session's ID, begins with it, so that it works as printed.
func (a *app) cli() string {
	line := []string{"alisio-lsp"}
	for _, flag := range []struct{ name, value string }{{"--data-dir", a.dataDir}, {"--config", a.configPath}} {
		if flag.value != "" {
			line = append(line, flag.name, shellWord(a.path(flag.value)))
		}
	}
	return strings.Join(line, " ")
}

// chatCommandLine is the command that runs the chat again as it was run: a.cli() and the workspace it was
// given.
func (a *app) chatCommandLine(workspace string) string {
	line := a.cli() + " chat"
	if workspace != "" {
		line += " --workspace " + shellWord(a.workspaceDir(workspace))
	}
	return line
}

// shellWord quotes s for a POSIX shell unless it is made only of characters no shell reads specially.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// dialDaemon connects a client to the shared daemon through a forwarder in this process, as an editor's
// `alisio-lsp serve` does (the daemon is started when none runs, and restarted if it dies); wait returns once
// the forwarder has ended, after the client closed.
func (a *app) dialDaemon(ctx context.Context, workspace string) (*chat.Client, func(), error) {
	toDaemon, fromClient := io.Pipe()
	toClient, fromDaemon := io.Pipe()
	log := zap.NewNop() // the terminal is the chat's: the forwarder logs only to a --log-file
	if a.logFile != "" {
		log = a.log
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.forwarder(log).Run(context.WithoutCancel(ctx), toDaemon, fromDaemon)
		fromDaemon.Close()
		toDaemon.Close()
	}()
	wait := func() { <-done }
	rwc := pipeConn{Reader: toClient, Writer: fromClient, closers: []io.Closer{fromClient, toClient}}
	client, err := chat.Connect(ctx, rwc, workspace, version())
	if err != nil {
		rwc.Close()
		wait()
		return nil, nil, err
	}
	return client, wait, nil
}

// pipeConn is the client's side of the two pipes to the forwarder.
type pipeConn struct {
	io.Reader
	io.Writer
	closers []io.Closer
}

func (p pipeConn) Close() error {
	for _, c := range p.closers {
		_ = c.Close()
	}
	return nil
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
