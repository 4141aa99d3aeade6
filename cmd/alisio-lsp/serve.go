package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/shared"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

func (a *app) serveCommand() *cobra.Command {
	var private bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "run the stdio daemon for an editor (the default command)",
		Long: "Editors start this. By default it forwards the editor's LSP stream to the shared daemon of the data\n" +
			"directory (starting it when none runs), so that several windows and the command line share the sessions;\n" +
			"--no-shared runs a private daemon in this process instead (it holds the store alone).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if private {
				return a.serve(cmd.Context())
			}
			return a.forward(cmd.Context())
		},
	}
	cmd.Flags().BoolVar(&private, "no-shared", false, "run a private daemon in this process instead of using the shared one")
	return cmd
}

// daemonCommand is the shared daemon the forwarders start: it holds the store of the data directory and
// serves every editor connection and CLI invocation on its Unix socket until it has been idle for --idle.
func (a *app) daemonCommand() *cobra.Command {
	var idle time.Duration
	cmd := &cobra.Command{
		Use:    "daemon",
		Short:  "the shared daemon (started by `serve`; not run by hand)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := storage.DataDir(a.dataDir)
			if err != nil {
				return err
			}
			lock, err := shared.Lock(dir)
			if errors.Is(err, shared.ErrRunning) {
				return nil // another owner won the race; the forwarders connect to it
			}
			if err != nil {
				return err
			}
			defer lock.Close()
			st, err := storage.OpenDataDir(dir, storage.DefaultOptions("").WithLogger(a.log))
			if err != nil {
				return err
			}
			storeGone := false
			defer func() {
				if !storeGone {
					closeWithin(st, 30*time.Second, a.log)
				}
			}()
			ctx, stop := signal.NotifyContext(contextOf(cmd), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			hub := server.NewHub(0) // what every window shares
			owner := &shared.Owner{DataDir: dir, Version: version(), Idle: idle, Log: a.log,
				ServeLSP: func(ctx context.Context, conn io.ReadWriteCloser) {
					// Each window reads the file again, so that a fixed file applies at the editor's next restart.
					cfg, cfgErr := a.loadConfig()
					if cfgErr != nil {
						cfg = config.Default()
					}
					server.Serve(ctx, conn, server.Options{Config: cfg, ConfigProblem: cfgErr, Store: st, Log: a.log, LogFile: a.path(a.logFile), Hub: hub, Provider: provider.DefaultOptions(), Version: version()})
				},
				RunCLI: func(ctx context.Context, args []string, cwd string, stdin io.Reader, stdout, stderr, log io.Writer) int {
					defer hub.StoreChanged() // the windows' meters follow what the command changed
					root, sub := newRootCommand(stdin, stdout, stderr)
					sub.store, sub.daemonDataDir, sub.cwd, sub.remoteLog = st, dir, cwd, log
					root.SetArgs(args)
					if err := root.ExecuteContext(ctx); err != nil {
						sub.fail(err)
						return 1
					}
					return 0
				}}
			err = owner.Run(ctx)
			if _, statErr := os.Stat(st.Dir()); errors.Is(err, shared.ErrOrphaned) || statErr != nil {
				// The store's files are gone with the directory (removed while the daemon ran, or while it
				// started): closing the store would retry its flush forever.
				a.log.Warn("the data directory was removed; leaving without closing the store", zap.Error(err))
				storeGone = true
				return nil
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&idle, "idle", shared.DefaultIdle, "stop after this long without clients")
	return cmd
}

// closeWithin closes the shared daemon's store, and leaves the process if that takes longer than limit (Badger
// retries a flush to a directory that was removed forever): every acknowledged write was synced already.
func closeWithin(st *storage.Store, limit time.Duration, log *zap.Logger) {
	done := make(chan struct{})
	go func() {
		if err := st.Close(); err != nil {
			log.Warn("closing the session store", zap.Error(err))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		log.Error("the session store did not close in time; leaving anyway (every saved message was synced)", zap.Duration("waited", limit))
		_ = log.Sync()
		os.Exit(1)
	}
}

// forward connects the editor's stdio to the shared daemon, starting it when none runs.
func (a *app) forward(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if info, err := os.Stdin.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintln(a.stderr, "alisio-lsp: this is the language server; it speaks JSON-RPC on stdin/stdout and is started by your editor.\n"+
			"See `alisio-lsp --help` for the command-line tools; Ctrl-C to quit.")
	}
	f := a.forwarder(a.log)
	code := f.Run(ctx, os.Stdin, os.Stdout)
	_ = a.log.Sync()
	return exitCode(code) // main leaves with it: a read blocked on stdin would not end otherwise
}

// forwarder connects a client (an editor, the terminal chat) to the shared daemon of the data directory,
// starting the daemon when none runs.
func (a *app) forwarder(log *zap.Logger) *shared.Forwarder {
	return &shared.Forwarder{Version: version(), Log: log,
		DataDir: func(opts json.RawMessage) (string, error) {
			override := a.dataDir
			if override == "" {
				var o struct {
					DataDir string `json:"dataDir"`
					Alisio  struct {
						DataDir string `json:"dataDir"`
					} `json:"alisio"`
				}
				_ = json.Unmarshal(opts, &o)
				override = o.Alisio.DataDir
				if override == "" {
					override = o.DataDir
				}
			}
			return storage.DataDir(override)
		},
		StartOwner: a.startOwner}
}

// startOwner starts the shared daemon for dataDir in its own session, detached from the editor, logging to
// dataDir/daemon.log; exited receives nil when it leaves because another daemon owns dataDir (its exit code 0),
// else why it stopped.
func (a *app) startOwner(dataDir string) (exited <-chan error, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, err
	}
	args := []string{"daemon", "--data-dir", dataDir, "--log-file", filepath.Join(dataDir, "daemon.log"), "--log-level", a.logLevel}
	if a.configPath != "" {
		args = append(args, "--config", a.path(a.configPath))
	}
	if idle := os.Getenv("ALISIO_DAEMON_IDLE"); idle != "" {
		args = append(args, "--idle", idle)
	}
	cmd := exec.Command(exe, args...)
	osproc.Detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s daemon: %w", exe, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }() // reaps it if it exits while this forwarder runs
	return done, nil
}

// stdio is the daemon's JSON-RPC stream: stdin and stdout (logs never go there).
type stdio struct{}

// Read reads the client's messages from stdin.
func (stdio) Read(p []byte) (int, error) { return os.Stdin.Read(p) }

// Write writes the daemon's messages to stdout.
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }

// Close leaves stdin and stdout open: the process exits right after the daemon stops.
func (stdio) Close() error { return nil }

// serve runs the LSP daemon over stdio and exits with the code LSP asks for (0 after shutdown and exit, 1
// otherwise). It leaves the process explicitly: a read blocked on stdin would not end otherwise.
func (a *app) serve(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if info, err := os.Stdin.Stat(); err == nil && info.Mode()&os.ModeCharDevice != 0 {
		fmt.Fprintln(a.stderr, "alisio-lsp: this is the language server; it speaks JSON-RPC on stdin/stdout and is started by your editor.\n"+
			"See `alisio-lsp --help` for the command-line tools; Ctrl-C to quit.")
	}
	code := server.Serve(ctx, stdio{}, server.Options{Config: a.cfg, ConfigProblem: a.cfgErr, DataDir: a.dataDir, Log: a.log,
		LogFile: a.path(a.logFile), Provider: provider.DefaultOptions(), Version: version()})
	_ = a.log.Sync()
	return exitCode(code) // main leaves with it: a read blocked on stdin would not end otherwise
}
