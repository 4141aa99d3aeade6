package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/server"
)

func (a *app) serveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "run the stdio daemon (the default command)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context()) },
	}
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
	code := server.Serve(ctx, stdio{}, server.Options{Config: a.cfg, DataDir: a.dataDir, Log: a.log,
		Provider: provider.DefaultOptions(), Version: version()})
	_ = a.log.Sync()
	os.Exit(code)
	return nil
}
