package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// lastToolResult is the text of the last tool message of session id.
func lastToolResult(t *testing.T, h *harness, id string) string {
	t.Helper()
	v, err := h.store.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if v.Messages[i].Role == transcript.RoleTool {
			return v.Messages[i].Text
		}
	}
	t.Fatal("no tool result")
	return ""
}

// TestAgent_RecallReadsCompactedOriginals: after a compaction the model searches the replaced messages with
// recall and reads one whole, page by page; another session's recall finds nothing of this one's.
func TestAgent_RecallReadsCompactedOriginals(t *testing.T) {
	call := func(id, args string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: id, Name: "recall", Arguments: args}}}
	}
	cfg := config.Default()
	cfg.Compaction.KeepTurns, cfg.Compaction.UserWords, cfg.Limits.MaxContextChars = 1, 0, 64_000 // a 4,000-char read window
	h := newHarness(t, cfg, providertest.Script{Summaries: []providertest.Reply{{Text: `{"goal":"deploy","instructions":[],"discoveries":[],"accomplished":[],"currentState":"","nextSteps":[],"relevantFiles":[]}`}}, Replies: []providertest.Reply{
		{Text: "noted"}, {Text: "ok"}, {Text: "ok"},
		call("r1", `{"query":"zebra-42"}`), call("r2", `{"message":0,"offset":0}`), call("r3", `{"message":0,"offset":1000}`), {Text: "found it"},
		call("r4", `{"query":"zebra-42"}`), {Text: "nothing here"},
	}})
	id := h.session(t)
	padding := strings.Repeat("context line. ", 300)
	for _, text := range []string{"The deploy flag is ZEBRA-42; never change it. " + padding, "next " + padding, "more " + padding} {
		if _, err := h.agent.Prompt(context.Background(), id, text); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.agent.Compact(context.Background(), id, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.Prompt(context.Background(), id, "what was the flag, exactly?"); err != nil {
		t.Fatal(err)
	}
	v, _ := h.store.Transcript(id)
	var results []string
	for _, m := range v.Messages {
		if m.Role == transcript.RoleTool && m.ToolName == "recall" {
			results = append(results, m.Text)
		}
	}
	if len(results) != 3 {
		t.Fatalf("%d recall results", len(results))
	}
	if !strings.Contains(results[0], "#0 (user)") || !strings.Contains(results[0], "ZEBRA-42") {
		t.Fatalf("search: %s", results[0])
	}
	if !strings.HasPrefix(results[1], "#0 (user), characters 0–") || !strings.Contains(results[1], "recall with message 0 and offset") {
		t.Fatalf("read: %.300s", results[1])
	}
	if !strings.Contains(results[2], "characters 1000–") {
		t.Fatalf("read on: %.200s", results[2])
	}
	other := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), other, "look back"); err != nil {
		t.Fatal(err)
	}
	if out := lastToolResult(t, h, other); strings.Contains(out, "ZEBRA") || !strings.Contains(out, "Nothing of this session") {
		t.Fatalf("another session's recall: %s", out)
	}
	h.checkAll(t, id)
}
