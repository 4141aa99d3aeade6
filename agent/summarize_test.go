package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// summaryScript has three turns that each read big.txt (bigFile), then answer: enough for a compaction to
// summarize the first turns.
func summaryScript(summaries ...providertest.Reply) providertest.Script {
	var replies []providertest.Reply
	for i := 0; i < 3; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
			providertest.Reply{Text: fmt.Sprintf("turn %d done", i)})
	}
	return providertest.Script{Replies: replies, Summaries: summaries}
}

// bigFile writes big.txt, 6,000 chars, in h's workspace.
func bigFile(t *testing.T, h *harness) {
	if err := os.WriteFile(filepath.Join(h.ws, "big.txt"), []byte(strings.Repeat("a line of the big file\n", 260)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAgent_SuffixSummary: with prompt caching on, a compaction asks for the checkpoint in the suffix form —
// the agent's last request up to the span's end, serialised the same way (so that the provider reads it from
// its cache), its tools with tool_choice none, the session as prompt_cache_key, and the ask with the schema as
// a last user message — and stores the checkpoint it gets.
func TestAgent_SuffixSummary(t *testing.T) {
	h := newHarness(t, config.Default(), summaryScript())
	bigFile(t, h)
	id := h.session(t)
	for _, p := range []string{"Never touch vendor/. Read main.go.", "again", "once more"} {
		if _, err := h.agent.Prompt(context.Background(), id, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.agent.Compact(context.Background(), id, "the parser", nil); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	reqs := h.server.Requests()
	ask, agentReq := reqs[len(reqs)-1], reqs[len(reqs)-2]
	msgs, _ := ask["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	text, _ := last["content"].(string)
	if !strings.HasPrefix(text, compaction.SuffixMarker) || !strings.Contains(text, "focus on: the parser") || !strings.Contains(text, `"relevantFiles"`) ||
		ask["tool_choice"] != "none" || ask["prompt_cache_key"] != id || ask["response_format"] != nil {
		t.Fatalf("the summary request: tool_choice %v, key %v, ask %.300s", ask["tool_choice"], ask["prompt_cache_key"], text)
	}
	// Everything before the ask repeats the agent's last request: tools, instructions, then its messages.
	agentMsgs, _ := agentReq["messages"].([]any)
	if stringify(ask["tools"]) != stringify(agentReq["tools"]) || len(msgs) < 4 || len(msgs)-1 > len(agentMsgs) {
		t.Fatalf("the summary request's tools or messages differ from the last agent request's (%d, %d messages)", len(msgs), len(agentMsgs))
	}
	for i, m := range msgs[:len(msgs)-1] {
		if a, b := stringify(m), stringify(agentMsgs[i]); a != b {
			t.Fatalf("message %d of the summary request differs from the agent's:\n%s\n%s", i, a, b)
		}
	}
	ck, _, err := agent.CurrentCheckpoint(h.store, id)
	if err != nil || ck == nil || !strings.Contains(ck.Text, "Never touch vendor/") {
		t.Fatalf("checkpoint %+v: %v", ck, err)
	}
}

// TestAgent_SuffixSummaryFallsBack: a model that answers the suffix form with a tool call gets the standalone
// request, and the compaction completes; with provider.promptCache "off" only the standalone request is sent.
func TestAgent_SuffixSummaryFallsBack(t *testing.T) {
	h := newHarness(t, config.Default(), summaryScript(providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "x", Name: "read_file", Arguments: `{"path":"main.go"}`}}}))
	bigFile(t, h)
	id := h.session(t)
	for _, p := range []string{"Read main.go.", "again", "once more"} {
		if _, err := h.agent.Prompt(context.Background(), id, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.agent.Compact(context.Background(), id, "", nil); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	reqs := h.server.Requests()
	if _, standalone := reqs[len(reqs)-1]["response_format"]; !standalone || len(summarizerRequests(reqs)) != 2 {
		t.Fatalf("after the tool call, %d summary requests; the last standalone: %v", len(summarizerRequests(reqs)), standalone)
	}

	cfg := config.Default()
	cfg.Provider.PromptCache = "off"
	off := newHarness(t, cfg, summaryScript())
	bigFile(t, off)
	id = off.session(t)
	for _, p := range []string{"Read main.go.", "again", "once more"} {
		if _, err := off.agent.Prompt(context.Background(), id, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := off.agent.Compact(context.Background(), id, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range off.server.Requests() {
		if _, key := r["prompt_cache_key"]; key || strings.Contains(stringify(r["messages"]), compaction.SuffixMarker) {
			t.Fatalf("with promptCache off a request carries a cache key or the suffix form: %.300s", stringify(r))
		}
	}
}
