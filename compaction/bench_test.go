package compaction_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func genN(n, resultChars int) []transcript.Message {
	cfg := synthetic.Default(n)
	cfg.ResultChars, cfg.HugeEvery = resultChars, 0
	return synthetic.Generate(cfg)[:n]
}

// BenchmarkPrepareNoop is the per-turn cost before a model call when nothing needs doing: one message is
// appended to the meter and Prepare decides. It must be flat in the session length.
func BenchmarkPrepareNoop(b *testing.B) {
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 100_000_000
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			view := genN(n, 200)
			meter := compaction.NewMeter(view)
			// An empty message keeps the session's size constant however many iterations run.
			next := transcript.Message{Role: transcript.RoleAssistant}
			g := &compaction.Guard{}
			budget := compaction.BudgetFor(cfg, 0, "")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				meter.Add(next)
				p, err := compaction.Prepare(context.Background(), compaction.Input{View: view, Meter: meter}, cfg, budget,
					compaction.Options{}, compaction.Offline{}, g, nil)
				if err != nil || p.Changed {
					b.Fatalf("iteration %d: %v, decision %+v", i, err, p.Decision)
				}
			}
		})
	}
}

// BenchmarkReduce cuts 10k kept messages holding about 50 MB down to an 800k-char budget.
func BenchmarkReduce(b *testing.B) {
	view := genN(10_000, 10_000)
	for i := range view {
		if view[i].Role != transcript.RoleTool {
			view[i].Text = strings.Repeat("w", 2000)
		}
	}
	b.Logf("transcript: %d messages, %d chars", len(view), transcript.TotalChars(view))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		red := compaction.Reduce(view, 800_000)
		if len(red.Replace) == 0 {
			b.Fatal("nothing cut")
		}
	}
}

// BenchmarkFindSpan finds the boundary in a 100k-message session.
func BenchmarkFindSpan(b *testing.B) {
	view := genN(100_000, 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, ok := compaction.FindSpan(view, 2); !ok {
			b.Fatal("no span")
		}
	}
}

// BenchmarkCompactOffline compacts a 10k-message session with the offline summarizer.
func BenchmarkCompactOffline(b *testing.B) {
	view := genN(10_000, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := compaction.Compact(context.Background(), compaction.Input{View: view}, compaction.Options{KeepTurns: 2, MaxOutputTokens: 16000}, compaction.Offline{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
