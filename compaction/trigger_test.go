package compaction_test

import (
	"math"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func TestDecide(t *testing.T) {
	base := compaction.Budget{Threshold: 0.85, MaxContextChars: 800_000, MaxOutputTokens: 4096}
	withWindow := func(w int, src string) compaction.Budget { b := base; b.Window, b.WindowSource = w, src; return b }
	for _, tc := range []struct {
		name    string
		sizes   compaction.Sizes
		budget  compaction.Budget
		rule    compaction.Rule
		window  int
		source  string
		hardMax bool
	}{
		{"small session, nothing fires", compaction.Sizes{Instructions: 1000, Transcript: 10_000}, withWindow(128_000, "config"), compaction.RuleNone, 128_000, "config", false},
		{"A1 window rule counts the tool catalog", compaction.Sizes{Instructions: 4000, Transcript: 200_000, Tools: 240_000}, withWindow(128_000, "models"), compaction.RuleWindow, 128_000, "models", false},
		{"A1 reserve: request plus reply budget over the window", compaction.Sizes{Transcript: 4 * 27_000}, compaction.Budget{Threshold: 0.85, MaxContextChars: 800_000, MaxOutputTokens: 8192, Window: 32_768, WindowSource: "profile"}, compaction.RuleReserve, 32_768, "profile", true},
		{"A2 unknown window uses maxContextChars/4", compaction.Sizes{Transcript: 690_000}, base, compaction.RuleWindow, 200_000, "maxContextChars", false},
		{"A2 stand-in window keeps no reply reserve: a small budget half full does not compact", compaction.Sizes{Instructions: 1000, Transcript: 4800}, compaction.Budget{Threshold: 0.85, MaxContextChars: 12_000, MaxOutputTokens: 4096}, compaction.RuleNone, 3000, "maxContextChars", false},
		{"A2 absurd window ignored", compaction.Sizes{Transcript: 690_000}, withWindow(10_000_000, "models"), compaction.RuleWindow, 200_000, "maxContextChars (declared window over 2,000,000 tokens ignored)", false},
		{"A3 chars rule fires under a 1M window", compaction.Sizes{Instructions: 10_000, Transcript: 670_000}, withWindow(1_000_000, "config"), compaction.RuleChars, 1_000_000, "config", false},
		{"A3 does not count the catalog", compaction.Sizes{Transcript: 600_000, Tools: 200_000}, withWindow(1_000_000, "config"), compaction.RuleNone, 1_000_000, "config", false},
		{"H1 over the hard limit", compaction.Sizes{Instructions: 1, Transcript: 800_000}, withWindow(2_000_000, "config"), compaction.RuleChars, 2_000_000, "config", true},
		{"exactly at the window threshold fires", compaction.Sizes{Transcript: 4 * 85_000}, withWindow(100_000, "config"), compaction.RuleWindow, 100_000, "config", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := compaction.Decide(tc.sizes, tc.budget)
			if d.Rule != tc.rule || d.Compact != (tc.rule != compaction.RuleNone) || d.Window != tc.window || d.WindowSource != tc.source || d.OverHardLimit != tc.hardMax {
				t.Fatalf("Decide = %+v; want rule %q window %d (%s) hard %v", d, tc.rule, tc.window, tc.source, tc.hardMax)
			}
			if d.RequestTokens != transcript.EstimateTokens(tc.sizes.Request()) {
				t.Fatalf("request tokens %d", d.RequestTokens)
			}
		})
	}
}

// TestCompactsAt: where the window's compaction starts, and how far the request is toward it. In a window
// whose reply reserve ends before the threshold, the reserve sets both, so that a meter (and background
// compaction, which starts short of it) marks the point that fires, not the threshold it never reaches.
func TestCompactsAt(t *testing.T) {
	b := compaction.Budget{Threshold: 0.85, MaxContextChars: 800_000, MaxOutputTokens: 4096}
	for _, tc := range []struct {
		window, requestTokens, compactsAt int
		fraction                          float64
		rule                              compaction.Rule
	}{
		{128_000, 54_400, 108_800, 0.5, compaction.RuleNone},             // the threshold comes first
		{16_384, 6_144, 12_289, 6_144.0 / 12_289, compaction.RuleNone},   // the reserve comes first: 12,288 tokens leave 4,096
		{16_384, 12_288, 12_289, 12_288.0 / 12_289, compaction.RuleNone}, // one token short of firing
		{16_384, 12_289, 12_289, 1, compaction.RuleReserve},
		{0, 85_000, 170_000, 0.5, compaction.RuleNone}, // unknown window: maxContextChars/4 at the threshold, no reserve
	} {
		b.Window = tc.window
		d := compaction.Decide(compaction.Sizes{Transcript: 4 * tc.requestTokens}, b)
		if d.CompactsAtTokens != tc.compactsAt || math.Abs(d.WindowFraction-tc.fraction) > 1e-9 || d.Rule != tc.rule {
			t.Errorf("window %d, request %d tokens: compacts at %d, fraction %.6f, rule %q; want %d, %.6f, %q",
				tc.window, tc.requestTokens, d.CompactsAtTokens, d.WindowFraction, d.Rule, tc.compactsAt, tc.fraction, tc.rule)
		}
		if d.Compact != (d.RequestTokens >= d.CompactsAtTokens) {
			t.Errorf("window %d, request %d tokens: compact %v at %d", tc.window, tc.requestTokens, d.Compact, d.CompactsAtTokens)
		}
	}
}

// TestHardLimitFromTheWindow: with a known window, the hard limit is what fits in it after the reply reserve
// and the tool catalog, so that a small-window model never gets a request it cannot take; an unknown or
// absurd window leaves maxContextChars.
func TestHardLimitFromTheWindow(t *testing.T) {
	b := compaction.Budget{Threshold: 0.85, MaxContextChars: 800_000, MaxOutputTokens: 4096}
	for _, tc := range []struct {
		window, tools, limit int
		byWindow             bool
	}{
		{0, 5_000, 800_000, false},
		{10_000_000, 5_000, 800_000, false},
		{1_000_000, 5_000, 800_000, false},
		{32_768, 5_000, (32_768-4096)*4 - 5_000, true},
		{16_384, 0, (16_384 - 4096) * 4, true},
		{4_000, 0, 0, true},
	} {
		b.Window = tc.window
		limit, byWindow := b.HardLimit(tc.tools)
		if limit != tc.limit || byWindow != tc.byWindow {
			t.Errorf("window %d, tools %d: limit %d (by window %v); want %d (%v)", tc.window, tc.tools, limit, byWindow, tc.limit, tc.byWindow)
		}
	}
}

func TestMeter_RunningTotals(t *testing.T) {
	msgs := fromBytes([]byte{0, 10, 3, 12, 20, 7, 4, 1}, true)
	m := compaction.NewMeter(msgs[:3])
	m.Add(msgs[3:]...)
	if m.Chars() != transcript.TotalChars(msgs) {
		t.Fatalf("meter %d chars; want %d", m.Chars(), transcript.TotalChars(msgs))
	}
}
