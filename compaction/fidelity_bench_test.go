package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// fidelitySessions are the sessions the fidelity figures are measured on: every transcript of the corpus (up
// to its first call left without a result, which a compaction refuses) and generated sessions, some of whose
// user messages hold constraints.
func fidelitySessions(tb testing.TB) map[string][]transcript.Message {
	out := map[string][]transcript.Message{}
	for _, f := range transcripttest.Corpus(tb) {
		im, err := formats.Import(f.Read(tb), formats.Auto)
		if err != nil {
			tb.Fatal(err)
		}
		view := im.Messages
		if open := transcript.UnansweredCalls(view); len(open) > 0 {
			for i := range view {
				if slicesHasCall(view[i].ToolCalls, open[0].ID) {
					view = view[:i]
					break
				}
			}
		}
		out[f.Name] = view
	}
	for seed := uint64(1); seed <= 10; seed++ {
		cfg := synthetic.Default(200)
		cfg.Seed = seed
		out[fmt.Sprintf("generated-%02d", seed)] = synthetic.Generate(cfg)
	}
	return out
}

func slicesHasCall(calls []transcript.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// fidelityTotals adds up, over sessions, each kind's coverage before the merge (what the summarizer wrote)
// and after it (what is stored), for one compaction of each session as deep as it can go (keepTurns 0).
func fidelityTotals(tb testing.TB, sessions map[string][]transcript.Message, s compaction.Summarizer) (before, after compaction.Fidelity) {
	before, after = compaction.Fidelity{}, compaction.Fidelity{}
	add := func(f compaction.Fidelity, kind string, c compaction.Coverage) {
		t := f[kind]
		t.Anchors, t.Covered, t.Added = t.Anchors+c.Anchors, t.Covered+c.Covered, t.Added+c.Added
		f[kind] = t
	}
	for name, view := range sessions {
		res, err := compaction.Compact(context.Background(), compaction.Input{View: view}, compaction.Options{KeepTurns: 0, UserWordsChars: 40_000}, s, nil)
		if errors.Is(err, compaction.ErrNoGain) {
			continue // a session of one short turn: nothing to measure
		}
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		for kind, c := range res.Checkpoint.Fidelity {
			add(before, kind, c)
		}
		for kind, c := range compaction.Extract(view[:res.Rewrite.Drop]).Measure(&res.Checkpoint) {
			add(after, kind, c)
		}
	}
	return before, after
}

func share(c compaction.Coverage) float64 {
	if c.Anchors == 0 {
		return 100
	}
	return 100 * float64(c.Covered) / float64(c.Anchors)
}

// BenchmarkFidelity reports, per kind of anchor, the share the checkpoint covered before the ledger's merge
// and after it, over the corpus and generated sessions, for the offline summarizer and for a model that
// returns an empty checkpoint (docs/fidelity.md). After the merge, files and constraints are at 100 %.
func BenchmarkFidelity(b *testing.B) {
	sessions := fidelitySessions(b)
	for _, s := range []struct {
		name string
		s    compaction.Summarizer
	}{{"offline", compaction.Offline{}}, {"empty-checkpoint", emptyCheckpoint{}}} {
		b.Run(s.name, func(b *testing.B) {
			var before, after compaction.Fidelity
			for range b.N {
				before, after = fidelityTotals(b, sessions, s.s)
			}
			var line []string
			for _, kind := range []string{compaction.KindFiles, compaction.KindConstraints, compaction.KindCommands, compaction.KindErrors} {
				b.ReportMetric(share(before[kind]), kind+"-before-%")
				b.ReportMetric(share(after[kind]), kind+"-after-%")
				line = append(line, fmt.Sprintf("%s %d anchors: %.1f%% → %.1f%%", kind, before[kind].Anchors, share(before[kind]), share(after[kind])))
			}
			b.Logf("%d sessions, %s: %s", len(sessions), s.name, strings.Join(line, "; "))
		})
	}
}

// TestFidelity_FilesAndConstraintsComplete: on every session of the corpus and the generated ones, whatever
// the summarizer wrote, the stored checkpoint holds every file and every constraint of what it replaced.
func TestFidelity_FilesAndConstraintsComplete(t *testing.T) {
	sessions := fidelitySessions(t)
	for _, s := range []compaction.Summarizer{compaction.Offline{}, emptyCheckpoint{}} {
		_, after := fidelityTotals(t, sessions, s)
		for _, kind := range []string{compaction.KindFiles, compaction.KindConstraints} {
			if c := after[kind]; c.Covered != c.Anchors || c.Anchors == 0 {
				t.Errorf("%T: %s %d of %d after the merge", s, kind, c.Covered, c.Anchors)
			}
		}
	}
}
