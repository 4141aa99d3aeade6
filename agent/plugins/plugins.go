// Package plugins runs compaction hooks (SPEC §8): external hooks in any language (one process per hook call,
// JSON on stdin and stdout), the built-in memory plugin, and Guard, which holds every hook to its time limit
// and turns a panic into an error, so that a hook can fail but never stop or hang a compaction (PH2).
package plugins

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// FromSettings returns the plugins cfg enables, in order (the memory plugin first), each guarded by
// pluginHooks.timeoutMs.
func FromSettings(cfg config.Config, store *storage.Store) []compaction.Plugin {
	timeout := time.Duration(cfg.PluginHooks.TimeoutMs) * time.Millisecond
	var out []compaction.Plugin
	if cfg.Memory.Enabled && store != nil {
		out = append(out, Guard(&Memory{Store: store, MaxChars: cfg.Memory.MaxChars}, timeout))
	}
	for _, p := range cfg.Plugins {
		if !p.Disabled {
			out = append(out, Guard(&External{Config: p}, timeout))
		}
	}
	return out
}

// Guard runs p's hooks under timeout: a hook that does not answer in time, or panics, fails with an error
// saying so, and the compaction goes on without it.
func Guard(p compaction.Plugin, timeout time.Duration) compaction.Plugin {
	return guarded{p, timeout}
}

type guarded struct {
	compaction.Plugin
	timeout time.Duration
}

func (g guarded) BeforeCompact(ctx context.Context, in compaction.HookInput) (compaction.BeforeResult, error) {
	return within(ctx, g.timeout, "beforeCompact", func(ctx context.Context) (compaction.BeforeResult, error) {
		return g.Plugin.BeforeCompact(ctx, in)
	})
}

func (g guarded) AfterCompact(ctx context.Context, in compaction.HookInput) (compaction.AfterResult, error) {
	return within(ctx, g.timeout, "afterCompact", func(ctx context.Context) (compaction.AfterResult, error) {
		return g.Plugin.AfterCompact(ctx, in)
	})
}

// within runs hook on its own goroutine and waits at most timeout for it.
func within[T any](ctx context.Context, timeout time.Duration, hook string, run func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("%s panicked: %v\n%s", hook, p, firstLines(string(debug.Stack()), 6))}
			}
		}()
		v, err := run(ctx)
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.err = timedOut(hook, timeout)
		}
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return zero, timedOut(hook, timeout)
		}
		return zero, ctx.Err()
	}
}

func timedOut(hook string, timeout time.Duration) error {
	return fmt.Errorf("%s did not answer within pluginHooks.timeoutMs (%d ms); the compaction went on without it", hook, timeout.Milliseconds())
}

func firstLines(s string, n int) string {
	for i, c := range s {
		if c == '\n' {
			if n--; n == 0 {
				return s[:i]
			}
		}
	}
	return s
}
