package agent_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
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
			cfg := synthetic.Default(n)
			cfg.ResultChars, cfg.HugeEvery = 300, 0
			msgs := synthetic.Generate(cfg)
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
			a, err := agent.NewContextOnly(nil, st, c, b.TempDir(), relevantfiles.NewTracker())
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
	cfg := synthetic.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 300, 0
	sess, err := st.CreateSession(storage.Session{}, synthetic.Generate(cfg))
	if err != nil {
		b.Fatal(err)
	}
	a, err := agent.NewContextOnly(nil, st, config.Default(), b.TempDir(), relevantfiles.NewTracker())
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

// BenchmarkStatusFirstRead is the meter of a never-compacted 100k-message session in a store just opened, as
// the context command and a daemon's first alisio/status of that session measure it: the store has not read
// the session's record yet and the agent has no summary of it. Opening the store is not timed.
func BenchmarkStatusFirstRead(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "store")
	st, err := storage.Open(storage.DefaultOptions(dir).WithSyncWrites(false))
	if err != nil {
		b.Fatal(err)
	}
	cfg := synthetic.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 300, 0
	sess, err := st.CreateSession(storage.Session{}, synthetic.Generate(cfg))
	if err != nil {
		b.Fatal(err)
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	for _, reader := range []string{"context", "daemon"} {
		b.Run(reader, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				st, err := storage.Open(storage.DefaultOptions(dir))
				if err != nil {
					b.Fatal(err)
				}
				a, err := agent.NewContextOnly(nil, st, config.Default(), b.TempDir(), relevantfiles.NewTracker())
				if err != nil {
					b.Fatal(err)
				}
				status := a.Status
				if reader == "context" {
					status = a.ContextManager.Status
				}
				b.StartTimer()
				s, err := status(sess.ID)
				b.StopTimer()
				if err != nil || s.Messages != sess.Head.ViewLen || s.TranscriptChars == 0 {
					b.Fatal(s, err)
				}
				a.Tools.Close()
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompact100k is a manual compaction of a never-compacted 100k-message session, end to end as the
// CLI's `compact` runs it with the offline summarizer: reading the transcript, the compaction, and Apply
// (durable writes). Each iteration compacts a fresh copy, stored while the timer is stopped.
func BenchmarkCompact100k(b *testing.B) {
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(b.TempDir(), "store")))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	cfg := synthetic.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 1200, 50 // the shape of `alisio-lsp sessions generate --messages 100000`
	msgs := synthetic.Generate(cfg)
	m := &agent.ContextManager{Store: st, Config: config.Default(), Summarizer: compaction.Offline{}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		sess, err := st.CreateSession(storage.Session{}, msgs)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if res, err := m.Compact(ctx, sess.ID, "", nil); err != nil || res.Rewrite.Drop < 99_000 {
			b.Fatal(err, res.Rewrite.Drop)
		}
	}
}
