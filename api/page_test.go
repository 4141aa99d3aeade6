package api

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func TestPair(t *testing.T) {
	call := func(id string) transcript.ToolCall {
		return transcript.ToolCall{ID: id, Name: "read_file", Arguments: "{}"}
	}
	msgs := []transcript.Message{
		{Role: transcript.RoleUser, Text: "go"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{call("1"), call("2")}},
		{Role: transcript.RoleTool, ToolCallID: "2", Text: "boom", IsError: true},
		{Role: transcript.RoleTool, ToolCallID: "1", Text: "ok"},
		// SWE-agent reuses IDs: this "1" is answered by the result after it, not by the one above.
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{call("1"), call("3"), call("4")}},
		{Role: transcript.RoleTool, ToolCallID: "1", Text: "again"},
		{Role: transcript.RoleAssistant, Text: "later"},
		{Role: transcript.RoleTool, ToolCallID: "3", Text: "too late: after the next assistant message"},
	}
	got := Pair(msgs, []string{"3"})
	want := map[int][]CallOutcome{
		1: {{Result: 3, State: CallDone}, {Result: 2, State: CallFailed}},
		4: {{Result: 5, State: CallDone}, {Result: -1, State: CallUncertain}, {Result: -1, State: CallRunning}},
	}
	for i, m := range got {
		if !reflect.DeepEqual(m.Outcomes, want[i]) {
			t.Errorf("message %d: outcomes %+v, want %+v", i, m.Outcomes, want[i])
		}
		if m.Text != msgs[i].Text || m.ToolCallID != msgs[i].ToolCallID {
			t.Errorf("message %d changed: %+v", i, m.Message)
		}
	}
	// On the wire the outcomes sit beside the message's own fields, and only on messages with calls.
	b, err := json.Marshal(got[:2])
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Count(s, `"outcomes"`) != 1 || !strings.Contains(s, `"toolCalls"`) || !strings.Contains(s, `"state":"failed"`) {
		t.Errorf("wire form: %s", s)
	}
}

// TestNotices: the sentences beside the meter name the way out in the words of the edge that shows them.
func TestNotices(t *testing.T) {
	st := agent.Status{Session: "s1", UncertainCalls: []string{"call_1", "call_2"}, LastCheckpointPartial: true}
	editor, shell := Notices(st, EditorWords()), Notices(st, ShellWords("alisio-lsp"))
	if len(editor) != 2 || editor[0].Kind != NoticeUncertainCalls || editor[1].Kind != NoticePartialCheckpoint {
		t.Fatalf("notices %+v", editor)
	}
	for _, want := range []string{"2 tool calls were cut off", "call_1, call_2", ":AlisioRecover"} {
		if !strings.Contains(editor[0].Text, want) {
			t.Errorf("editor notice lacks %q: %s", want, editor[0].Text)
		}
	}
	if !strings.Contains(shell[0].Text, "alisio-lsp sessions recover s1 --acknowledge") || strings.Contains(shell[0].Text, ":Alisio") {
		t.Errorf("shell notice: %s", shell[0].Text)
	}
	if !strings.Contains(editor[1].Text, "alisio.compaction.maxOutputTokens") || !strings.Contains(shell[1].Text, "compaction.maxOutputTokens in the config") {
		t.Errorf("partial: %s / %s", editor[1].Text, shell[1].Text)
	}
	if n := Notices(agent.Status{Session: "s1"}, EditorWords()); n != nil {
		t.Errorf("a session in order has notices: %+v", n)
	}
}

// TestMeterOf: one token figure, calibrated when the provider reported counts; the limit of the rule closest to
// firing, in tokens.
func TestMeterOf(t *testing.T) {
	st := agent.Status{EstimatedTokens: 10_000, Window: 128_000, WindowSource: "models", WindowFraction: 0.1, CharsFraction: 0.05,
		UsedChars: 40_000, HardLimit: 800_000}
	if m := MeterOf(st); m.Tokens != 10_000 || m.TokensSource != "estimated" || m.LimitTokens != 128_000 {
		t.Errorf("estimated, window rule: %+v", m)
	}
	st.CalibratedTokens = 12_000 // without a report from the provider it is only the estimate again
	if m := MeterOf(st); m.Tokens != 10_000 || m.TokensSource != "estimated" {
		t.Errorf("not reported: %+v", m)
	}
	st.LastReportedTokens = 11_500
	if m := MeterOf(st); m.Tokens != 12_000 || m.TokensSource != "calibrated" {
		t.Errorf("calibrated: %+v", m)
	}
	// limits.maxContextChars closer to firing: its 800k chars and the 8k-char catalog at about 4 chars a
	// token, and the request estimated the same way, whatever the provider reported.
	st.CharsFraction, st.ToolsChars = 0.5, 8_000
	if m := MeterOf(st); m.LimitTokens != 202_000 || m.Tokens != 10_000 || m.TokensSource != "estimated" {
		t.Errorf("chars rule: %+v", m)
	}
	// No window known, nothing measured: about 4 chars a token.
	if m := MeterOf(agent.Status{WindowSource: "maxContextChars", HardLimit: 800_000, Threshold: 0.85}); m.LimitTokens != 200_000 ||
		m.CompactsAt != 0.85 || m.CompactsAtText != "compaction starts at 85% of limits.maxContextChars (the model's window is not known)" {
		t.Errorf("nothing measured: %+v", m)
	}
	// A 16k window keeps 4,096 tokens for the reply from 12,289 on: compaction starts at 75%, not 85%.
	small := agent.Status{EstimatedTokens: 6_000, Window: 16_384, WindowSource: "config", WindowFraction: 0.49, Threshold: 0.85, CompactsAtTokens: 12_289}
	if m := MeterOf(small); m.LimitTokens != 16_384 || math.Abs(m.CompactsAt-12_289.0/16_384) > 1e-9 ||
		m.CompactsAtText != "compaction starts at 75% of the 16k-token window, before the 85% threshold, so that 4.1k tokens stay free for the reply (limits.maxOutputTokens)" {
		t.Errorf("small window: %+v", m)
	}
	small.Window, small.CompactsAtTokens = 128_000, 108_800
	if m := MeterOf(small); m.CompactsAt != 0.85 || m.CompactsAtText != "compaction starts at 85% of the 128k-token window" {
		t.Errorf("large window: %+v", m)
	}
}

// TestCacheMeter: the prompt cache's figures and sentence, from the usage the session's replies reported.
func TestCacheMeter(t *testing.T) {
	if m := MeterOf(agent.Status{HardLimit: 800_000}); m.Cache != nil {
		t.Errorf("no usage yet: %+v", m.Cache)
	}
	st := agent.Status{HardLimit: 800_000, Usage: &storage.UsageTotals{Input: 1_200_000, Cached: 936_000, CacheWrite: 40_000,
		Last: transcript.Usage{PromptTokens: 14_200, CachedTokens: 11_644}}}
	c := MeterOf(st).Cache
	if c == nil || c.LastInput != 14_200 || c.LastCached != 11_644 || c.Cached != 936_000 ||
		c.Text != "prompt cache: the last request read 82% of its 14k input tokens from the cache; this session 78% of 1.2M (40k written to it)" {
		t.Errorf("%+v", c)
	}
	st.Usage = &storage.UsageTotals{Input: 5_000, Last: transcript.Usage{PromptTokens: 2_000}}
	if c := MeterOf(st).Cache; c == nil || !strings.HasPrefix(c.Text, "prompt cache: nothing read from it yet (5k input tokens") {
		t.Errorf("a server without a cache: %+v", c)
	}
}

// TestRulesNotice: a project rules file over what a request sends of it gets a notice naming its size, the
// limit and what to do.
func TestRulesNotice(t *testing.T) {
	st := agent.Status{Rules: &agent.ProjectRules{File: "AGENTS.md", FileChars: 48_000, Limit: 32_000, Cut: true}}
	n := Notices(st, EditorWords())
	if len(n) != 1 || n[0].Kind != NoticeProjectRules || !strings.Contains(n[0].Text, "AGENTS.md is 48k characters, over the 32k a request sends of it") ||
		!strings.Contains(n[0].Text, "projectRules.maxChars") {
		t.Fatalf("%+v", n)
	}
	st.Rules.Cut = false
	if n := Notices(st, EditorWords()); len(n) != 0 {
		t.Fatalf("rules that fit: %+v", n)
	}
}
