package agent_test

import (
	"context"
	"errors"
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

// threeTurnsThenCompact runs the summary script's three turns in a new session of h (first as the first
// prompt), compacts it with focus, checks the stored session, and returns its ID.
func threeTurnsThenCompact(t *testing.T, h *harness, first, focus string) string {
	t.Helper()
	bigFile(t, h)
	id := h.session(t)
	for _, p := range []string{first, "again", "once more"} {
		if _, err := h.agent.Prompt(context.Background(), id, p); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.agent.Compact(context.Background(), id, focus, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	// The compaction's sentence counts the request as the meter does: by the provider's reported tokens.
	if st, err := h.agent.Status(id); err != nil || st.LastReportedTokens == 0 || res.Event.AfterTokens != st.CalibratedTokens {
		t.Errorf("the compaction says the request is %d tokens; the meter %d (%v)", res.Event.AfterTokens, st.CalibratedTokens, err)
	}
	return id
}

// TestAgent_SuffixSummary: with prompt caching on, a compaction asks for the checkpoint in the suffix form —
// the agent's last request up to the span's end, serialised the same way (so that the provider reads it from
// its cache), its tools with tool_choice none, the session as prompt_cache_key, and the ask with the schema as
// a last user message — and stores the checkpoint it gets.
func TestAgent_SuffixSummary(t *testing.T) {
	h := newHarness(t, config.Default(), summaryScript())
	id := threeTurnsThenCompact(t, h, "Never touch vendor/. Read main.go.", "the parser")
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
	threeTurnsThenCompact(t, h, "Read main.go.", "")
	reqs := h.server.Requests()
	if _, standalone := reqs[len(reqs)-1]["response_format"]; !standalone || len(summarizerRequests(reqs)) != 2 {
		t.Fatalf("after the tool call, %d summary requests; the last standalone: %v", len(summarizerRequests(reqs)), standalone)
	}

	cfg := config.Default()
	cfg.Provider.PromptCache = "off"
	off := newHarness(t, cfg, summaryScript())
	threeTurnsThenCompact(t, off, "Read main.go.", "")
	for _, r := range off.server.Requests() {
		if _, key := r["prompt_cache_key"]; key || strings.Contains(stringify(r["messages"]), compaction.SuffixMarker) {
			t.Fatalf("with promptCache off a request carries a cache key or the suffix form: %.300s", stringify(r))
		}
	}
}

// TestAgent_BackgroundCompaction: once a turn ends with the request near the trigger, the next compaction's
// summary is written in the background; the automatic compaction then takes it (no second summarizer call for
// that span, the event says so) and replaces exactly its span, keeping what came after. A manual compaction
// throws a waiting one away. In a window too small to keep the reply's room up to the threshold the reply
// reserve fires first, and the background summary starts short of that point, not of the threshold.
func TestAgent_BackgroundCompaction(t *testing.T) {
	t.Run("maxContextChars", func(t *testing.T) {
		cfg := config.Default()
		cfg.Limits.MaxContextChars = 24_000
		backgroundCompaction(t, cfg)
	})
	t.Run("reply reserve", func(t *testing.T) {
		cfg := config.Default()
		// 12,288 tokens with 6,144 kept for the reply: the reserve fires at 50 %, long before 85 %.
		cfg.Provider.ContextWindow, cfg.Limits.MaxOutputTokens = 12_288, 6_144
		backgroundCompaction(t, cfg)
	})
}

func backgroundCompaction(t *testing.T, cfg config.Config) {
	var replies []providertest.Reply
	for i := 0; i < 12; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("r%d", i), Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
			providertest.Reply{Text: fmt.Sprintf("turn %d read", i)})
	}
	h := newHarness(t, cfg, providertest.Script{Replies: replies})
	bigFile(t, h)
	id := h.session(t)
	for i := 0; i < 12; i++ {
		if _, err := h.agent.Prompt(context.Background(), id, fmt.Sprintf("turn %d: read big.txt", i)); err != nil {
			t.Fatal(err)
		}
	}
	h.checkAll(t, id)
	var types []string
	ahead, completed := 0, 0
	for _, e := range h.events {
		if e.Kind != agent.EventCompaction {
			continue
		}
		types = append(types, e.Compaction.Type)
		if e.Compaction.Type == compaction.EventCompleted {
			completed++
			if e.Compaction.Ahead {
				ahead++
			}
		}
	}
	summaries := len(summarizerRequests(h.server.Requests()))
	if ahead == 0 || summaries > completed+1 {
		t.Fatalf("%d compactions, %d from a background summary, %d summarizer calls; events %v", completed, ahead, summaries, types)
	}
	// A summary written ahead and waiting is thrown away by a manual compaction, which asks for its own.
	if _, err := h.agent.Compact(context.Background(), id, "", nil); err != nil && !errors.Is(err, compaction.ErrNothingToSummarize) && !errors.Is(err, compaction.ErrNoGain) {
		t.Fatal(err)
	}
	if st, err := h.agent.Status(id); err != nil || st.CompactingInBackground {
		t.Fatalf("after the manual compaction: %+v %v", st, err)
	}
}
