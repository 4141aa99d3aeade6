package compaction_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"
	"pgregory.net/rapid"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/compaction/compactiontest"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

func prepare(t *testing.T, in compaction.Input, cfg config.Config, s compaction.Summarizer, g *compaction.Guard) (compaction.Prepared, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	b := compaction.BudgetFor(cfg, 0, "")
	p, err := compaction.Prepare(context.Background(), in, cfg, b, compaction.Options{}, s, g, rec.emit)
	var be *compaction.BudgetError
	if err != nil && !errors.As(err, &be) {
		t.Fatalf("Prepare failed without F1: %v", err)
	}
	if p.Changed {
		if e := compactiontest.Check(in.View, p.Rewrite, err, compactiontest.Limits{MaxContextChars: cfg.Limits.MaxContextChars, InstructionsChars: in.InstructionsChars, KeepTurns: cfg.Compaction.KeepTurns}); e != nil {
			t.Fatal(e)
		}
		if got := p.Rewrite.Apply(in.View); len(got) != len(p.View) {
			t.Fatal("composed rewrite and view disagree")
		}
	}
	return p, rec, err
}

func cfgWith(maxChars int, auto bool) config.Config {
	c := config.Default()
	c.Limits.MaxContextChars, c.Compaction.Auto, c.Compaction.KeepTurns = maxChars, auto, 1
	return c
}

func TestPrepare_NothingToDo(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(20))
	p, rec, err := prepare(t, compaction.Input{View: view}, config.Default(), compaction.Offline{}, &compaction.Guard{})
	if err != nil || p.Changed || len(rec.events) != 0 || p.Decision.Compact {
		t.Fatalf("%v %v %s", err, p.Changed, rec.types())
	}
}

func TestPrepare_AutoCompactionThenFits(t *testing.T) {
	cfg := synthetic.Default(600)
	cfg.HugeEvery = 0
	view := synthetic.Generate(cfg)
	total := transcript.TotalChars(view)
	c := cfgWith(total+total/10, true) // 0.85 × limit < total: the chars rule fires
	p, rec, err := prepare(t, compaction.Input{View: view}, c, compaction.Offline{}, &compaction.Guard{})
	// With no known window, the window rule uses maxContextChars/4 tokens and fires with the chars rule.
	if err != nil || !p.Changed || p.Decision.Rule != compaction.RuleWindow || rec.types() != "compaction_started,compaction_completed" {
		t.Fatalf("%v changed=%v rule=%s events=%s", err, p.Changed, p.Decision.Rule, rec.types())
	}
	if rec.events[1].Reason != compaction.ReasonAuto || rec.events[1].Rule != compaction.RuleWindow {
		t.Fatalf("event %+v", rec.events[1])
	}
}

func TestPrepare_ReductionOfAHugeKeptTail(t *testing.T) {
	// One turn whose tool outputs alone exceed the limit: compaction keeps the turn, reduction cuts it (R1).
	view := []transcript.Message{user("old"), asst("old answer"), user("grep everything"), asst("", "a", "b")}
	view = append(view, result("a", strings.Repeat("x", 60_000)), result("b", strings.Repeat("y", 60_000)), asst("found it"))
	p, rec, err := prepare(t, compaction.Input{View: view, InstructionsChars: 1000}, cfgWith(50_000, true), compaction.Offline{}, &compaction.Guard{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.types(), compaction.EventReduced) {
		t.Fatalf("events %s", rec.types())
	}
	for _, e := range rec.events {
		if e.Type == compaction.EventReduced && e.Messages == 0 {
			t.Fatal("R6: context_reduced without a count")
		}
	}
	if 1000+transcript.TotalChars(p.View) > 50_000 {
		t.Fatal("H1: still over")
	}
}

func TestPrepare_F1Variants(t *testing.T) {
	huge := strings.Repeat("z", 30_000)
	// One turn, no safe boundary before its end: a single huge user message and an answer.
	noBoundary := []transcript.Message{user(huge), asst(huge)}
	normal := []transcript.Message{user(huge), asst(huge), user("next"), asst("ok")}
	for _, tc := range []struct {
		name  string
		view  []transcript.Message
		instr int
		auto  bool
		s     compaction.Summarizer
		want  string
	}{
		{"instructions alone over the limit", normal, 9000, true, compaction.Offline{}, "Automatic compaction ran but could not reduce it enough."},
		{"no safe boundary", noBoundary, 9000, true, compaction.Offline{}, "Automatic compaction was skipped because there is no safe boundary to summarize."},
		{"summarizer failed", normal, 9000, true, &scripted{err: errors.New("provider timed out")}, "Automatic compaction failed (summarizer: provider timed out)."},
		{"disabled", normal, 9000, false, compaction.Offline{}, "Automatic compaction is disabled."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, err := prepare(t, compaction.Input{View: tc.view, InstructionsChars: tc.instr}, cfgWith(10_000, tc.auto), tc.s, &compaction.Guard{})
			var be *compaction.BudgetError
			if !errors.As(err, &be) {
				t.Fatalf("want F1, got %v", err)
			}
			n := tc.instr + transcript.TotalChars(p.View)
			want := "Context budget exceeded (approximately " + strconv.Itoa(n) + " characters of conversation; limit 10000). " + tc.want
			if err.Error() != want {
				t.Fatalf("F1 text:\n got  %s\n want %s", err, want)
			}
			if !p.Changed {
				t.Fatal("F1: the reduction must still be returned for persisting")
			}
		})
	}
}

func TestPrepare_LastResortOncePerTurnAndNoLoops(t *testing.T) {
	cfg := synthetic.Default(200)
	cfg.HugeEvery = 0
	view := synthetic.Generate(cfg)
	total := transcript.TotalChars(view)
	s := &countingSummarizer{}
	g := &compaction.Guard{}
	c := cfgWith(total+total/10, true)
	_, _, err := prepare(t, compaction.Input{View: view}, c, s, g)
	if err != nil || s.calls != 1 {
		t.Fatalf("first call: %v, %d summarizer calls", err, s.calls)
	}
	// The summarizer's checkpoint is as big as what it replaces: the compaction is dropped (no gain) and the
	// guard keeps the next model calls from compacting again and again.
	s.pad = total
	for i := 0; i < 5; i++ {
		_, _, _ = prepare(t, compaction.Input{View: view}, c, s, g)
	}
	if s.calls != 2 {
		t.Fatalf("%d summarizer calls; an ineffective compaction must not repeat in a loop", s.calls)
	}
}

type countingSummarizer struct {
	calls int
	pad   int
}

func (c *countingSummarizer) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	c.calls++
	r, err := compaction.Offline{}.Summarize(ctx, req)
	if c.pad > 0 {
		r.Text = strings.Replace(r.Text, `"goal":"`, `"goal":"`+strings.Repeat("p", c.pad), 1)
	}
	return r, err
}

func TestPrepare_ToolCatalogNeverCausesF1(t *testing.T) {
	view := []transcript.Message{user("hi"), asst("hello")}
	c := cfgWith(10_000, true)
	rec := &recorder{}
	p, err := compaction.Prepare(context.Background(), compaction.Input{View: view, ToolsChars: 500_000}, c, compaction.BudgetFor(c, 0, ""),
		compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, rec.emit)
	if err != nil || !p.Decision.Compact || p.Decision.Rule != compaction.RuleWindow {
		t.Fatalf("TC1: %v, decision %+v", err, p.Decision)
	}
}

func TestPrepare_LoweringTheLimitTakesEffect(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(100))
	total := transcript.TotalChars(view)
	if _, _, err := prepare(t, compaction.Input{View: view}, cfgWith(800_000, true), compaction.Offline{}, &compaction.Guard{}); err != nil {
		t.Fatal(err)
	}
	p, rec, err := prepare(t, compaction.Input{View: view}, cfgWith(total/2, true), compaction.Offline{}, &compaction.Guard{})
	if err != nil || !p.Changed || transcript.TotalChars(p.View) > total/2 {
		t.Fatalf("A5: %v %s", err, rec.types())
	}
}

// TestPrepare_Property runs the whole pre-call pipeline on generated transcripts under random budgets and
// checks every guarantee on what it decided: a valid transcript within the hard limit, or the F1 error (or the
// catalog's, when only the tool catalog keeps it out of the window) with the reduction still returned.
func TestPrepare_Property(t *testing.T) {
	var changed, failed, compacted int
	defer func() {
		t.Logf("%d runs changed the transcript, %d compacted it, %d ended in F1", changed, compacted, failed)
	}()
	rapid.Check(t, func(rt *rapid.T) {
		view := fromBytes(rapid.SliceOfN(rapid.Byte(), 1, 70).Draw(rt, "program"), true)
		total := transcript.TotalChars(view)
		cfg := config.Default()
		cfg.Limits.MaxContextChars = rapid.IntRange(4000, max(4001, 2*total)).Draw(rt, "maxContextChars")
		cfg.Compaction.KeepTurns = rapid.IntRange(0, 4).Draw(rt, "keepTurns")
		cfg.Compaction.Auto = rapid.Bool().Draw(rt, "auto")
		cfg.Compaction.Threshold = rapid.Float64Range(0.1, 0.99).Draw(rt, "threshold")
		instr := rapid.IntRange(0, 6000).Draw(rt, "instructions")
		window := rapid.SampledFrom([]int{0, 8192, 128_000, 3_000_000}).Draw(rt, "window")
		in := compaction.Input{View: view, InstructionsChars: instr, ToolsChars: rapid.IntRange(0, 50_000).Draw(rt, "tools")}
		p, err := compaction.Prepare(context.Background(), in, cfg, compaction.BudgetFor(cfg, window, "test"), compaction.Options{},
			compaction.Offline{}, &compaction.Guard{}, nil)
		var be *compaction.BudgetError
		var ce *compaction.CatalogError
		if err != nil && !errors.As(err, &be) && !errors.As(err, &ce) {
			rt.Fatalf("Prepare failed without F1: %v", err)
		}
		if ce != nil && (window == 0 || window > compaction.MaxTrustedWindow || in.ToolsChars == 0) {
			rt.Fatalf("a catalog error without a catalog in a known window: %v", err)
		}
		if be != nil && !strings.HasPrefix(err.Error(), "Context budget exceeded (approximately ") {
			rt.Fatalf("F1 text: %v", err)
		}
		if be != nil {
			failed++
		}
		if len(p.Compactions) > 0 {
			compacted++
		}
		if !p.Changed {
			if err == nil && instr+total > cfg.Limits.MaxContextChars {
				rt.Fatalf("over the hard limit and nothing done")
			}
			return
		}
		changed++
		if got := p.Rewrite.Apply(view); transcript.TotalChars(got) != transcript.TotalChars(p.View) || len(got) != len(p.View) {
			rt.Fatalf("the composed rewrite does not produce the returned view")
		}
		if e := compactiontest.Check(view, p.Rewrite, err, compactiontest.Limits{MaxContextChars: cfg.Limits.MaxContextChars,
			InstructionsChars: instr, KeepTurns: -1}); e != nil {
			rt.Fatal(e)
		}
	})
}

// longTurn is a turn of n tool calls, each answered with size chars.
func longTurn(name string, n, size int) []transcript.Message {
	msgs := []transcript.Message{user("turn " + name)}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s%d", name, i)
		msgs = append(msgs, asst("", id), result(id, strings.Repeat(name, size)))
	}
	return append(msgs, asst("done with "+name))
}

// TestPrepare_BudgetCompactionCutsInsideALongLastTurn: turns A and B of 10 × 3000 chars and a last turn C of
// 60 × 2000 chars under a 20000-char limit. What keepTurns keeps (turn C) cannot fit even reduced, so L1's
// budget compaction cuts inside C at its last safe boundary (G2) and the transcript fits: no false F1.
func TestPrepare_BudgetCompactionCutsInsideALongLastTurn(t *testing.T) {
	view := append(append(longTurn("A", 10, 3000), longTurn("B", 10, 3000)...), longTurn("C", 60, 2000)...)
	cfg := cfgWith(20_000, true)
	cfg.Compaction.KeepTurns = 2
	rec := &recorder{}
	p, err := compaction.Prepare(context.Background(), compaction.Input{View: view}, cfg, compaction.BudgetFor(cfg, 0, ""),
		compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, rec.emit)
	if err != nil {
		t.Fatalf("F1 although a cut inside the last turn fits: %v (events %s)", err, rec.types())
	}
	if e := compactiontest.Check(view, p.Rewrite, err, compactiontest.Limits{MaxContextChars: 20_000, KeepTurns: -1}); e != nil {
		t.Fatal(e)
	}
	last := p.Compactions[len(p.Compactions)-1].Event
	if last.Reason != compaction.ReasonBudget || len(p.View) != 2 || !p.View[0].Summary || p.View[1].Text != "done with C" {
		t.Fatalf("the budget compaction must cut at the last safe boundary of turn C: reason %s, kept %d messages", last.Reason, len(p.View)-1)
	}
	if n := strings.Count(rec.types(), compaction.EventStarted); n != 2 {
		t.Fatalf("%d compactions (%s); want the automatic one and one budget compaction", n, rec.types())
	}
}

// TestPrepare_BudgetCompactionGoesDeeperWhenTheKeepTurnsCutIsNotEnough: the last turn alone, reduced, fits the
// limit, so L1 first cuts at keepTurns; when its 3000-char checkpoint beside that turn is over the limit, or it
// gains nothing (a short turn B), the budget compaction goes on inside the last turn (G2) instead of failing
// with F1.
func TestPrepare_BudgetCompactionGoesDeeperWhenTheKeepTurnsCutIsNotEnough(t *testing.T) {
	for _, tc := range []struct {
		name       string
		callsOfB   int
		compaction string // the reasons of the completed compactions
	}{
		{"its checkpoint leaves it over", 10, "auto,budget,budget"},
		{"it gains nothing", 4, "auto,budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := longTurn("C", 36, 2000)
			limit := compaction.Reduce(c, 0).Chars + 1500
			view := append(append(longTurn("A", 10, 3000), longTurn("B", tc.callsOfB, 3000)...), c...)
			cfg := cfgWith(limit, true)
			cfg.Compaction.KeepTurns = 2
			rec := &recorder{}
			p, err := compaction.Prepare(context.Background(), compaction.Input{View: view}, cfg, compaction.BudgetFor(cfg, 0, ""),
				compaction.Options{}, &countingSummarizer{pad: 3000}, &compaction.Guard{}, rec.emit)
			if err != nil {
				t.Fatalf("F1 although a cut inside the last turn fits: %v (events %s)", err, rec.types())
			}
			if e := compactiontest.Check(view, p.Rewrite, err, compactiontest.Limits{MaxContextChars: limit, KeepTurns: -1}); e != nil {
				t.Fatal(e)
			}
			if len(p.View) != 2 || p.View[1].Text != "done with C" {
				t.Fatalf("kept %d messages; want the cut at the last safe boundary of turn C", len(p.View)-1)
			}
			var reasons []string
			for _, r := range p.Compactions {
				reasons = append(reasons, string(r.Event.Reason))
			}
			if got := strings.Join(reasons, ","); got != tc.compaction || strings.Count(rec.types(), compaction.EventStarted) != 3 {
				t.Fatalf("compactions %s (events %s); want %s after three attempts", got, rec.types(), tc.compaction)
			}
		})
	}
}

// readsTurn is a turn of n read_file calls of size chars each, made in parallel (one assistant message) or one
// after another.
func readsTurn(name string, n, size int, parallel bool) []transcript.Message {
	msgs := []transcript.Message{user("turn " + name)}
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("%s%d", name, i))
	}
	if parallel {
		msgs = append(msgs, asst("", ids...))
		for _, id := range ids {
			msgs = append(msgs, result(id, strings.Repeat(name, size)))
		}
	} else {
		for _, id := range ids {
			msgs = append(msgs, asst("", id), result(id, strings.Repeat(name, size)))
		}
	}
	return append(msgs, asst("done with "+name))
}

// TestPrepare_BudgetCompactionKeepsFewerTurnsWhenTheirsCannotFit: the audit's stuck sessions. The turn before
// the last cannot fit the limit even reduced, so the keepTurns cut (2 turns) can never fit; the budget
// compaction keeps only the last turn, with the offline summarizer's checkpoint sized to the limit, instead of
// failing with F1 at every later prompt.
func TestPrepare_BudgetCompactionKeepsFewerTurnsWhenTheirsCannotFit(t *testing.T) {
	for _, tc := range []struct {
		name     string
		limit    int
		big      []transcript.Message
		wantKept int // messages kept after the checkpoint
	}{
		{"30 parallel reads at 8,000", 8_000, readsTurn("C", 30, 2000, true), 1},
		{"40 sequential reads at 12,000", 12_000, readsTurn("C", 40, 2000, false), 1},
		{"40 sequential reads at 20,000", 20_000, readsTurn("C", 40, 2000, false), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			view := append(append(longTurn("A", 1, 200), longTurn("B", 1, 200)...), tc.big...)
			view = append(view, user("now run the tests"))
			cfg := cfgWith(tc.limit, true)
			cfg.Compaction.KeepTurns = 2
			rec := &recorder{}
			p, err := compaction.Prepare(context.Background(), compaction.Input{View: view, InstructionsChars: 290}, cfg,
				compaction.BudgetFor(cfg, 0, ""), compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, rec.emit)
			if err != nil {
				t.Fatalf("F1 although keeping only the last turn fits: %v (events %s)", err, rec.types())
			}
			if e := compactiontest.Check(view, p.Rewrite, err, compactiontest.Limits{MaxContextChars: tc.limit, InstructionsChars: 290, KeepTurns: -1}); e != nil {
				t.Fatal(e)
			}
			if len(p.View) != 1+tc.wantKept || !p.View[0].Summary || p.View[len(p.View)-1].Text != "now run the tests" {
				t.Fatalf("kept %d messages after the checkpoint; want the last turn", len(p.View)-1)
			}
			if size := 290 + transcript.TotalChars(p.View); size > tc.limit {
				t.Fatalf("%d chars after compaction; limit %d", size, tc.limit)
			}
		})
	}
}

// TestOffline_CheckpointFitsItsBudget: the offline summarizer's checkpoint of a long session holds at most its
// share of the hard limit, keeping the user's constraints and the goal ahead of the tool work.
func TestOffline_CheckpointFitsItsBudget(t *testing.T) {
	var view []transcript.Message
	view = append(view, user("Fix the flaky test in ci/run.sh. Never edit files under vendor/. Always run go vet before committing."))
	for i := 0; i < 45; i++ {
		id := fmt.Sprintf("t%d", i)
		call := asst(fmt.Sprintf("Running the tests, attempt %d, looking at pkg/mod%d/file%d_test.go.", i, i, i), id)
		call.ToolCalls[0].Name, call.ToolCalls[0].Arguments = "run_command", fmt.Sprintf(`{"command":"go test ./pkg/mod%d/... -run TestThing%d -count=1 -v"}`, i, i)
		view = append(view, call, result(id, fmt.Sprintf("--- FAIL: TestThing%d (0.%02ds)\n", i, i)+strings.Repeat("output line\n", 200)))
	}
	view = append(view, asst("The flake comes from a shared temp dir."), user("next"), asst("ok"))
	const limit = 12_000
	res, err := compaction.Compact(context.Background(), compaction.Input{View: view, InstructionsChars: 290},
		compaction.Options{KeepTurns: 1, MaxOutputTokens: 16000, HardLimit: limit}, compaction.Offline{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := res.View[0].Text
	if n := utf8.RuneCountInString(text); n > limit/4 {
		t.Fatalf("the checkpoint has %d chars; its share of the %d-char limit is %d", n, limit, limit/4)
	}
	for _, want := range []string{"Never edit files under vendor/", "Always run go vet", "Fix the flaky test"} {
		if !strings.Contains(text, want) {
			t.Errorf("the fitted checkpoint lost %q:\n%s", want, text)
		}
	}
}

// TestPrepare_ACatalogThatFillsTheWindowIsItsOwnError: when the tool catalog alone fills the model's window,
// Prepare says so as a CatalogError, without compacting (no compaction can help); when the conversation would
// fit the window but for the catalog, the same error replaces F1 — never "limit 0".
func TestPrepare_ACatalogThatFillsTheWindowIsItsOwnError(t *testing.T) {
	c := cfgWith(800_000, true)
	b := compaction.BudgetFor(c, 32_000, "models")
	small := []transcript.Message{user("hi"), asst("hello"), user("again")}
	rec := &recorder{}
	_, err := compaction.Prepare(context.Background(), compaction.Input{View: small, InstructionsChars: 290, ToolsChars: 120_000}, c, b,
		compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, rec.emit)
	var ce *compaction.CatalogError
	if !errors.As(err, &ce) || ce.Room > 0 || rec.types() != "" {
		t.Fatalf("a catalog larger than the window: %v (events %q)", err, rec.types())
	}
	for _, want := range []string{"32000-token window", "no room for the conversation"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the message lacks %q: %s", want, err)
		}
	}
	if strings.Contains(err.Error(), "limit 0") || strings.Contains(err.Error(), "Context budget exceeded") {
		t.Errorf("the catalog's error reads as F1: %s", err)
	}

	// 40,000 chars of instructions, which nothing reduces, fit the window but not beside an 80,000-char catalog.
	_, err = compaction.Prepare(context.Background(), compaction.Input{View: small, InstructionsChars: 40_000, ToolsChars: 80_000}, c, b,
		compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, nil)
	if !errors.As(err, &ce) || ce.Room <= 0 || !strings.Contains(err.Error(), "leaves 31616 characters") {
		t.Fatalf("a conversation that fits only without the catalog: %v", err)
	}
	// Without the catalog in the way, it is F1.
	_, err = compaction.Prepare(context.Background(), compaction.Input{View: small, InstructionsChars: 120_000}, c, b,
		compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, nil)
	var be *compaction.BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("a conversation larger than the window: %v", err)
	}
}

// TestPrepare_RealTranscriptsAtSmallBudgets: every corpus transcript, at 12,000 and 20,000 chars, gets a
// transcript within the limit, or F1 only when even its last turn, cut as deep as G2 allows and reduced,
// cannot fit beside a checkpoint of a quarter of the limit (the audit found a false F1 at 12,000).
func TestPrepare_RealTranscriptsAtSmallBudgets(t *testing.T) {
	for _, f := range transcripttest.Corpus(t) {
		im, err := formats.Import(f.Read(t), formats.Auto)
		if err != nil {
			t.Fatal(err)
		}
		view := im.Messages
		for _, open := range transcript.UnansweredCalls(view) {
			view = append(view, transcript.Message{Role: transcript.RoleTool, ToolCallID: open.ID, Text: "outcome unknown"})
		}
		for i := range view {
			view[i].ID = fmt.Sprint("m", i) // as stored: a cut copy names its original
		}
		for _, limit := range []int{12_000, 20_000} {
			t.Run(fmt.Sprintf("%s at %d", f.Name, limit), func(t *testing.T) {
				cfg := cfgWith(limit, true)
				cfg.Compaction.KeepTurns = 2
				p, err := compaction.Prepare(context.Background(), compaction.Input{View: view, InstructionsChars: 290}, cfg,
					compaction.BudgetFor(cfg, 0, ""), compaction.Options{}, compaction.Offline{}, &compaction.Guard{}, nil)
				if !p.Changed && err == nil {
					return // it fits as it is
				}
				if e := compactiontest.Check(view, p.Rewrite, err, compactiontest.Limits{MaxContextChars: limit, InstructionsChars: 290, KeepTurns: -1}); e != nil {
					t.Fatal(e)
				}
				var be *compaction.BudgetError
				if !errors.As(err, &be) {
					return
				}
				span, ok := compaction.LastTurnSpan(view)
				if !ok {
					span, ok = compaction.FindSpan(view, 1)
				}
				if ok && 290+limit/4+compaction.Reduce(view[span.End:], compaction.ReductionTarget(limit, 290)).Chars <= limit {
					t.Fatalf("a false F1: the deepest cut fits: %v", err)
				}
			})
		}
	}
}
