package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// instantChat answers at once, so that a benchmark measures the loop and not a provider.
type instantChat struct{}

func (instantChat) Complete(context.Context, provider.Request, func(provider.Delta)) (provider.Reply, error) {
	return provider.Reply{Message: transcript.Message{Role: transcript.RoleAssistant, Text: "ok"}, FinishReason: "stop"}, nil
}

// BenchmarkTurnOverhead is the loop's own cost for a one-call turn (store reads, triggers, durable appends of
// the prompt and the reply; no provider time) in a session whose history holds 1k / 10k / 100k messages and
// whose transcript, as after a compaction, is a checkpoint and the last 200 messages.
func BenchmarkTurnOverhead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			st, err := storage.Open(storage.DefaultOptions(filepath.Join(b.TempDir(), "store")))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			cfg := transcripttest.Default(n)
			cfg.ResultChars, cfg.HugeEvery = 300, 0
			msgs := transcripttest.Generate(cfg)
			sess, err := st.CreateSession(storage.Session{}, msgs)
			if err != nil {
				b.Fatal(err)
			}
			drop := len(msgs) - 200
			for !isSafe(msgs, drop) {
				drop--
			}
			if _, err := st.Apply(sess.ID, transcript.Rewrite{BaseEpoch: sess.Head.Epoch, BaseLen: len(msgs), Drop: drop,
				Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}}}); err != nil {
				b.Fatal(err)
			}
			c := config.Default()
			c.Limits.MaxContextChars = 100_000_000
			a, err := agent.NewContextOnly(st, c, b.TempDir(), relevantfiles.NewTracker())
			if err != nil {
				b.Fatal(err)
			}
			defer a.Tools.Close()
			a.Chat = instantChat{}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := a.Prompt(ctx, sess.ID, "next"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func isSafe(msgs []transcript.Message, p int) bool {
	for _, s := range transcript.SafeBoundaries(msgs) {
		if s == p {
			return true
		}
	}
	return false
}

// BenchmarkStatusLargeView is the meter of a session whose transcript holds 100k messages, after the first
// read seeded it: one record read per call.
func BenchmarkStatusLargeView(b *testing.B) {
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(b.TempDir(), "store")).WithSyncWrites(false))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := transcripttest.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 300, 0
	sess, err := st.CreateSession(storage.Session{}, transcripttest.Generate(cfg))
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.NewContextOnly(st, config.Default(), b.TempDir(), relevantfiles.NewTracker())
	if err != nil {
		b.Fatal(err)
	}
	defer a.Tools.Close()
	if _, err := a.Status(sess.ID); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if s, err := a.Status(sess.ID); err != nil || s.Messages < 100_000 {
			b.Fatal(err)
		}
	}
}
