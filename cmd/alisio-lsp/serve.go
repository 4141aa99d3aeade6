package main

import (
	"context"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/storage"
)

func (a *app) serveCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "run the stdio daemon (the default command)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context()) },
	}
}

// serve runs the daemon until its input closes or it is signalled. The JSON-RPC server is not built yet: for
// now it only holds the session store and stops cleanly.
func (a *app) serve(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return a.withStore(func(st *storage.Store) error {
		a.log.Info("daemon started", zap.String("store", st.Dir()))
		done := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, a.stdin)
			close(done)
		}()
		select {
		case <-ctx.Done():
		case <-done:
		}
		a.log.Info("daemon stopped")
		return nil
	})
}
