package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/storage/storagetest"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

type harness struct {
	http   *httptest.Server // serves server; closing it makes the provider unreachable
	agent  *agent.Agent
	shared *agent.Shared // what the harness's agents share, as the daemon's windows do
	store  *storage.Store
	server *providertest.Server
	ws     string
	mu     sync.Mutex // guards events, appended by the turn's goroutine
	events []agent.Event
}

// eventsSoFar is a copy of the events reported so far.
func (h *harness) eventsSoFar() []agent.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

func newHarness(t *testing.T, cfg config.Config, script providertest.Script) *harness {
	return newHarnessFor(t, "openai", cfg, script)
}

// newHarnessFor runs the agent against the local test provider speaking kind's wire format.
func newHarnessFor(t *testing.T, kind string, cfg config.Config, script providertest.Script) *harness {
	t.Helper()
	srv := providertest.New(script)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(t.TempDir(), "store")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache, window := cfg.Provider.PromptCache, cfg.Provider.ContextWindow
	cfg.Provider = config.Provider{Kind: "openai", BaseURL: hs.URL + "/v1", Model: "alisio-test", PromptCache: cache, ContextWindow: window}
	switch kind {
	case "anthropic":
		cfg.Provider = config.Provider{Kind: "anthropic", BaseURL: hs.URL, Model: "alisio-test", PromptCache: cache, ContextWindow: window}
	case "responses":
		cfg.Provider.Responses = true
	}
	shared := agent.NewShared()
	a, err := agent.New(context.Background(), shared, st, cfg, ws, nil, provider.Options{MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{agent: a, shared: shared, store: st, server: srv, ws: ws, http: hs}
	a.OnEvent = func(e agent.Event) {
		h.mu.Lock()
		h.events = append(h.events, e)
		h.mu.Unlock()
	}
	return h
}

func (h *harness) session(t *testing.T) string {
	s, err := h.store.CreateSession(storage.Session{Workspace: h.ws}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// checkAll runs the invariant checks on the stored session and on every request the server saw.
func (h *harness) checkAll(t *testing.T, id string) {
	t.Helper()
	if v := h.server.Violations(); len(v) > 0 {
		t.Fatalf("the provider received invalid requests: %v", v)
	}
	view, err := h.store.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(view.Messages); err != nil {
		t.Fatal(err)
	}
	storagetest.CheckTotals(t, h.store, id)
	if err := h.server.CheckBudget(h.agent.Settings().Limits.MaxContextChars); err != nil {
		t.Fatal(err)
	}
	// Nothing is lost: every message ever sent is still in the history.
	hist, _ := h.store.History(id)
	ids := map[string]bool{}
	for _, m := range hist {
		ids[m.ID] = true
	}
	for _, m := range view.Messages {
		if !ids[m.ID] {
			t.Fatalf("message %s of the transcript is missing from the history", m.ID)
		}
	}
}

func call(id, name, args string) providertest.ToolCall {
	return providertest.ToolCall{ID: id, Name: name, Arguments: args}
}

func TestAgent_ToolLoopAcrossTurns(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{
		Models: []map[string]any{{"id": "alisio-test", "context_length": 32768}},
		Replies: []providertest.Reply{
			{Text: "Reading both.", ToolCalls: []providertest.ToolCall{call("call_a", "read_file", `{"path":"main.go"}`), call("call_b", "list_dir", `{"path":"."}`)}},
			{ToolCalls: []providertest.ToolCall{call("call_c", "edit_file", `{"path":"main.go","oldText":"func main() {}","newText":"func main() { println(1) }"}`)}},
			{Text: "Done: main prints 1.", Reasoning: "simple"},
			{Text: "Second turn answer."},
		}})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "make main print 1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply != "Done: main prints 1." || res.ModelCalls != 3 {
		t.Fatalf("result %+v", res)
	}
	raw, _ := os.ReadFile(filepath.Join(h.ws, "main.go"))
	if !strings.Contains(string(raw), "println(1)") {
		t.Fatal("the edit did not happen")
	}
	if _, err := h.agent.Prompt(context.Background(), id, "thanks"); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	v, _ := h.store.Transcript(id)
	if len(v.Messages) != 9 || v.Messages[1].ToolCalls[1].ID != "call_b" || v.Messages[6].Reasoning != "simple" {
		t.Fatalf("transcript has %d messages", len(v.Messages))
	}
	// The replayed request carries the calls and results byte-exact, and the reasoning back.
	reqs := h.server.Requests()
	last := reqs[len(reqs)-1]["messages"].([]any)
	if len(last) != 9 || !strings.Contains(stringify(last), `"tool_call_id":"call_b"`) || !strings.Contains(stringify(last), `"reasoning_content":"simple"`) {
		t.Fatalf("replayed request: %s", stringify(last))
	}
	if h.agent.Window != 32768 || h.agent.WindowSource != "models" {
		t.Fatalf("window %d from %q", h.agent.Window, h.agent.WindowSource)
	}
	if c, err := h.agent.Calibration(id); err != nil || c.ReportedTokens == 0 || c.CharsPerToken == 0 {
		t.Fatalf("calibration %+v %v", c, err)
	}
	st, err := h.agent.Status(id)
	if err != nil || st.LastReportedTokens == 0 || st.CalibratedTokens == 0 || st.EstimatedTokens == 0 || st.WindowSource != "models" {
		t.Fatalf("status %+v", st)
	}
	// A restarted daemon (a new Shared) calibrates the meter from the stored reply, as before the restart.
	restarted, err := agent.New(context.Background(), agent.NewShared(), h.store, h.agent.Settings(), h.ws, nil, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Tools.Close()
	again, err := restarted.Status(id)
	if err != nil || again.LastReportedTokens != st.LastReportedTokens || again.CalibratedTokens != st.CalibratedTokens {
		t.Fatalf("after a restart the meter shows %d calibrated tokens (%d reported); before it %d (%d)", again.CalibratedTokens, again.LastReportedTokens, st.CalibratedTokens, st.LastReportedTokens)
	}
}

// summarizerRequests are the requests that asked for a checkpoint, each as the text of what it asked with
// (its instructions and schema): standalone, with structured output, or in the suffix form, the agent's own
// request with the ask in a last user message.
func summarizerRequests(reqs []map[string]any) []string {
	var out []string
	for _, r := range reqs {
		if _, ok := r["response_format"]; ok {
			out = append(out, stringify(r["response_format"])+stringify(r["messages"]))
			continue
		}
		if oc, ok := r["output_config"]; ok {
			out = append(out, stringify(oc)+stringify(r["system"]))
			continue
		}
		if msgs, _ := r["messages"].([]any); len(msgs) > 0 {
			last, _ := msgs[len(msgs)-1].(map[string]any)
			text, _ := last["content"].(string)
			if blocks, ok := last["content"].([]any); ok { // Anthropic: the ask is the last text block
				b, _ := blocks[len(blocks)-1].(map[string]any)
				text, _ = b["text"].(string)
			}
			if strings.Contains(text, compaction.SuffixMarker) {
				out = append(out, text)
			}
		}
	}
	return out
}

func stringify(v any) string {
	var b strings.Builder
	enc := newEncoder(&b)
	_ = enc.Encode(v)
	return b.String()
}

func TestAgent_AutomaticCompactionInsideALongTurn(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 40_000
	cfg.Compaction.KeepTurns = 2
	var replies []providertest.Reply
	for i := 0; i < 30; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call("call_"+string(rune('a'+i%26))+string(rune('a'+i/26)), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' y"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "All done."})
	h := newHarness(t, cfg, providertest.Script{Replies: replies})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "run the command thirty times. Never touch main.go.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Reply != "All done." {
		t.Fatalf("%+v", res)
	}
	h.checkAll(t, id)
	compactions := 0
	for _, e := range h.events {
		if e.Kind == agent.EventCompaction && e.Compaction.Type == compaction.EventCompleted {
			compactions++
		}
	}
	if compactions == 0 {
		t.Fatal("no automatic compaction in a turn that outgrew the budget")
	}
	for i, r := range h.server.Requests() {
		if n := len(stringify(r["messages"])); n > 2*40_000 {
			t.Fatalf("request %d is %d bytes: an oversized request was sent", i, n)
		}
	}
	v, _ := h.store.Transcript(id)
	if !v.Messages[0].Summary || !strings.Contains(v.Messages[0].Text, "Never touch main.go") {
		t.Fatalf("the checkpoint lost the user's constraint: %q", v.Messages[0].Text)
	}
}

func TestAgent_ProviderFailuresLeaveTheSessionConsistent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reply   providertest.Reply
		retried bool
		want    string
	}{
		{"server error", providertest.Reply{Status: 500, Error: "upstream overloaded"}, true, "HTTP 500: upstream overloaded"},
		{"rate limited", providertest.Reply{Status: 429, Error: "Rate limit reached", RetryAfter: "0"}, true, "HTTP 429"},
		{"garbage", providertest.Reply{Garbage: true}, false, "OpenAI-compatible /v1 endpoint"},
		{"stream cut mid tool call", providertest.Reply{ToolCalls: []providertest.ToolCall{call("call_x", "read_file", `{"path":"main.go","startLine":1}`)}, CutMidToolCall: true}, false, "stream was cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The SDK retries HTTP errors once (WithMaxRetries(1)): script those twice.
			replies := []providertest.Reply{tc.reply}
			if tc.retried {
				replies = append(replies, tc.reply)
			}
			h := newHarness(t, config.Default(), providertest.Script{Replies: append(replies, providertest.Reply{Text: "recovered"})})
			id := h.session(t)
			_, err := h.agent.Prompt(context.Background(), id, "hello")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
			h.checkAll(t, id)
			v, _ := h.store.Transcript(id)
			if len(v.Messages) != 1 || len(transcript.UnansweredCalls(v.Messages)) != 0 {
				t.Fatalf("after a failed call the session holds %d messages", len(v.Messages))
			}
			if !strings.Contains(err.Error(), "send the same prompt again in this session to resume") || !errors.Is(err, agent.ErrModelCall) {
				t.Fatalf("the error does not say how to retry: %v", err)
			}
			// The same prompt again resumes the turn: the prompt is not stored twice.
			res, err := h.agent.Prompt(context.Background(), id, "hello")
			if err != nil || res.Reply != "recovered" || !res.Resumed {
				t.Fatalf("retry: %v %+v", err, res)
			}
			v, _ = h.store.Transcript(id)
			if n := len(transcript.TurnStarts(v.Messages)); n != 1 {
				t.Fatalf("after the retry the session holds %d prompts; want 1", n)
			}
			h.checkAll(t, id)
		})
	}
}

func TestAgent_ToolErrorsAreResultsTheModelReads(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "no_such_tool", `{}`), call("c2", "read_file", `{"path":42}`), call("c3", "read_file", `{"path":"../../etc/passwd"}`)}},
		{Text: "I see the errors."},
	}})
	id := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), id, "go"); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	v, _ := h.store.Transcript(id)
	for i, want := range []string{"unknown tool", "invalid arguments", "outside the workspace"} {
		if m := v.Messages[2+i]; !m.IsError || !strings.Contains(m.Text, want) {
			t.Fatalf("result %d: %q", i, m.Text)
		}
	}
}

func TestAgent_TimeoutAndCancellation(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{{Text: "slow", DelayMs: 30_000}}})
	id := h.session(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := h.agent.Prompt(ctx, id, "hello")
	// Well before the provider's 30 s answer: the cancellation, not the reply, ended the turn.
	if !errors.Is(err, agent.ErrTurnStopped) || !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 20*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	h.checkAll(t, id)
}

func TestAgent_UncertainCallsBlockUntilRecovered(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{{Text: "continuing"}}})
	id := h.session(t)
	// What a crash between journaling a call and its result leaves behind.
	_, _ = h.store.Append(id, transcript.Message{Role: transcript.RoleUser, Text: "deploy"},
		transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "call_deploy", Name: "run_command", Arguments: `{"command":"./deploy.sh"}`}}})
	_, err := h.agent.Prompt(context.Background(), id, "go on")
	var ue *agent.UncertainCallsError
	if !errors.As(err, &ue) || ue.Session != id || len(ue.Calls) != 1 || ue.Calls[0].ID != "call_deploy" {
		t.Fatalf("prompt with an uncertain call: %v", err)
	}
	if _, err := h.agent.Compact(context.Background(), id, "", nil); !errors.Is(err, compaction.ErrUncertainCalls) {
		t.Fatalf("compaction with an uncertain call: %v", err)
	}
	calls, err := agent.Recover(h.store, id, false)
	if err != nil || len(calls) != 1 {
		t.Fatalf("recover without acknowledge: %v %v", calls, err)
	}
	if v, _ := h.store.Transcript(id); len(v.Messages) != 2 {
		t.Fatal("recover without acknowledge changed the session")
	}
	if _, err := agent.Recover(h.store, id, true); err != nil {
		t.Fatal(err)
	}
	res, err := h.agent.Prompt(context.Background(), id, "go on")
	if err != nil || res.Reply != "continuing" {
		t.Fatalf("after recovery: %v", err)
	}
	h.checkAll(t, id)
	v, _ := h.store.Transcript(id)
	if v.Messages[2].Text != agent.RecoveryNote {
		t.Fatalf("recovery result %q", v.Messages[2].Text)
	}
	if s := h.server.Requests()[0]["messages"]; !strings.Contains(stringify(s), "outcome of this tool call is unknown") {
		t.Fatal("the model does not see that the outcome is unknown")
	}
}

// TestAgent_AnthropicSession drives a whole session through the Anthropic Messages shape; the test server
// rejects any request with a tool_use not answered by a tool_result in the next message, as the API does.
func TestAgent_AnthropicSession(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 30_000
	replies := []providertest.Reply{
		{Text: "Looking.", Reasoning: "I should read both files", Thinking: []string{"then list the directory"}, RedactedThinking: "hidden", ToolCalls: []providertest.ToolCall{
			call("toolu_1", "read_file", `{"path":"main.go"}`), call("toolu_2", "list_dir", `{"path":"."}`)}},
	}
	for i := 0; i < 12; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call("toolu_r"+strings.Repeat("x", i+1), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' z"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Finished."}, providertest.Reply{Text: "Second turn."})
	h := newHarnessFor(t, "anthropic", cfg, providertest.Script{Replies: replies})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "inspect the project. Do not edit anything.")
	if err != nil || res.Reply != "Finished." {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := h.agent.Prompt(context.Background(), id, "and now?"); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	compacted := false
	for _, e := range h.events {
		compacted = compacted || e.Kind == agent.EventCompaction && e.Compaction.Type == compaction.EventCompleted
	}
	if !compacted {
		t.Fatal("no compaction in a session that outgrew its budget")
	}
	structured := false
	for _, r := range h.server.Requests() {
		if oc, ok := r["output_config"].(map[string]any); ok && stringify(oc["format"]) != "" && strings.Contains(stringify(oc), `"type":"json_schema"`) {
			structured = true
		}
	}
	if !structured && len(summarizerRequests(h.server.Requests())) == 0 {
		t.Fatal("the Anthropic summarizer asked for the checkpoint neither with structured output nor with its schema in the suffix form")
	}
	// Each thinking block went back on its own, in order, with its signature, and the redacted block with its
	// data (the server rejects any block that does not match what it issued), while its message was kept.
	reqs := h.server.Requests()
	sent := stringify(reqs[1]["messages"])
	first, redacted, second := strings.Index(sent, `"thinking":"I should read both files"`), strings.Index(sent, `"type":"redacted_thinking"`), strings.Index(sent, `"thinking":"then list the directory"`)
	if first < 0 || redacted < first || second < redacted {
		t.Fatalf("thinking blocks not replayed one by one in order: %s", sent)
	}
}

// TestAgent_ResponsesModeAcrossACompaction runs a Responses API session whose encrypted reasoning items must
// come back byte-exact (the server rejects any it did not issue) while compaction drops those of the
// summarized span (RM1).
func TestAgent_ResponsesModeAcrossACompaction(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 30_000
	var replies []providertest.Reply
	for i := 0; i < 14; i++ {
		replies = append(replies, providertest.Reply{Reasoning: "step " + strings.Repeat("r", i), ToolCalls: []providertest.ToolCall{
			call("call_"+strings.Repeat("q", i+1), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\\\0' z"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Done.", Reasoning: "final"})
	h := newHarnessFor(t, "openai", cfg, providertest.Script{Replies: replies})
	cfg2 := h.agent.Settings()
	cfg2.Provider.Responses = true
	h.agent.SetSettings(cfg2)
	p, _ := cfg2.ActiveProvider()
	model, err := provider.Open(p, provider.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	h.agent.Chat, h.agent.Summarizer = model, model
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "run it many times")
	if err != nil || res.Reply != "Done." {
		t.Fatalf("%v %+v", err, res)
	}
	h.checkAll(t, id)
	v, _ := h.store.Transcript(id)
	if !v.Messages[0].Summary {
		t.Fatal("no compaction happened")
	}
	kept := 0
	for _, m := range v.Messages {
		for _, it := range m.Items {
			kept++
			if !strings.Contains(string(it.Data), "encrypted_content") {
				t.Fatalf("kept item changed: %s", it.Data)
			}
		}
	}
	last := h.server.Requests()[len(h.server.Requests())-1]
	sent := strings.Count(stringify(last["input"]), `"type":"reasoning"`)
	// The last request preceded the final reply, whose item is kept too.
	if kept < 2 || sent != kept-1 {
		t.Fatalf("%d items kept, %d sent in the last request", kept, sent)
	}
	first := h.server.Requests()[1]
	if !strings.Contains(stringify(first["include"]), "reasoning.encrypted_content") || first["store"] != false || first["stream"] != true {
		t.Fatalf("request %v", first)
	}
	streamed := ""
	for _, e := range h.events {
		if e.Kind == agent.EventDelta {
			streamed += e.Delta.Text + e.Delta.Reasoning
		}
	}
	if !strings.Contains(streamed, "Done.") || !strings.Contains(streamed, "step rrr") {
		t.Fatalf("the reply and its reasoning summary were not streamed: %q", streamed)
	}

	// A stream that drops before the response completes keeps nothing and says so.
	cut := newHarnessFor(t, "openai", config.Default(), providertest.Script{Replies: []providertest.Reply{{Text: "partial answer", CutMidToolCall: true}}})
	cut.agent.Chat = model2(t, cut)
	cid := cut.session(t)
	if _, err := cut.agent.Prompt(context.Background(), cid, "hi"); err == nil || !strings.Contains(err.Error(), "cut before the response completed") {
		t.Fatalf("cut stream: %v", err)
	}
	cut.checkAll(t, cid)
}

func TestAgent_SessionTokenCap(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxTokens = 50
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "list_dir", `{"path":"."}`)}, PromptTokens: 60},
		{Text: "never reached"},
	}})
	id := h.session(t)
	_, err := h.agent.Prompt(context.Background(), id, "go")
	if err == nil || !strings.Contains(err.Error(), "limits.maxTokens") {
		t.Fatalf("token cap: %v", err)
	}
	h.checkAll(t, id)
	if h.server.Remaining() != 1 {
		t.Fatal("a model call was made past the cap")
	}
}

// TestAgent_StepLimitStopsAToolLoop: a model that asks for a tool call every time stops at
// limits.maxStepsPerTurn with every result saved, and the next prompt continues from there.
func TestAgent_StepLimitStopsAToolLoop(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxStepsPerTurn = 3
	var replies []providertest.Reply
	for i := 0; i < 5; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{call(fmt.Sprintf("c%d", i), "list_dir", `{"path":"."}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Done at last."})
	h := newHarness(t, cfg, providertest.Script{Replies: replies})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "loop")
	var limit *agent.StepLimitError
	if !errors.As(err, &limit) || res.ModelCalls != 3 || !strings.Contains(err.Error(), "limits.maxStepsPerTurn") || !strings.Contains(err.Error(), "send another prompt") {
		t.Fatalf("step limit: %d calls, %v", res.ModelCalls, err)
	}
	if h.server.Remaining() != 3 {
		t.Fatalf("%d scripted replies left, want 3: a model call was made past the limit", h.server.Remaining())
	}
	h.checkAll(t, id)
	view, _ := h.store.Transcript(id)
	if last := view.Messages[len(view.Messages)-1]; last.Role != transcript.RoleTool || last.ToolCallID != "c2" {
		t.Fatalf("the third call's result is not the last thing saved: %+v", last)
	}
	// The next prompt goes on where the turn stopped.
	if res, err = h.agent.Prompt(context.Background(), id, "continue"); err != nil || res.Reply != "Done at last." {
		t.Fatalf("the next prompt did not continue: %+v, %v", res, err)
	}
	h.checkAll(t, id)

	// The default stops at 100 model calls; 0 removes the cap.
	replies = nil
	for i := 0; i < 120; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{call(fmt.Sprintf("d%d", i), "list_dir", `{"path":"."}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Finished."})
	for _, steps := range []int{100, 0} {
		cfg := config.Default()
		if steps == 0 {
			cfg.Limits.MaxStepsPerTurn = 0
		}
		h := newHarness(t, cfg, providertest.Script{Replies: replies})
		id := h.session(t)
		res, err := h.agent.Prompt(context.Background(), id, "loop")
		if steps == 100 && (!errors.As(err, &limit) || res.ModelCalls != 100) || steps == 0 && (err != nil || res.ModelCalls != 121) {
			t.Fatalf("maxStepsPerTurn %d: %d calls, %v", steps, res.ModelCalls, err)
		}
		h.checkAll(t, id)
	}
}

// TestAgent_OversizedRepliesAreNotRead: a provider that streams 300 MB of text, or of one tool call's
// arguments, whatever max_tokens says, is read only up to the reply budget's cap: the call fails saying so,
// no raw bytes reach the user, memory stays bounded, and the turn resumes with the same prompt.
func TestAgent_OversizedRepliesAreNotRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply providertest.Reply
	}{
		{"text", providertest.Reply{FloodBytes: 300 << 20}},
		{"tool call arguments", providertest.Reply{FloodBytes: 300 << 20, ToolCalls: []providertest.ToolCall{call("c1", "write_file", "")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{tc.reply, {Text: "Short and sweet."}}})
			id := h.session(t)
			peak := watchHeap(t)
			_, err := h.agent.Prompt(context.Background(), id, "flood me")
			grew := peak()
			var tooLarge *provider.ReplyTooLargeError
			if !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "limits.maxOutputTokens = 4096") || !strings.Contains(err.Error(), "kept nothing") {
				t.Fatalf("oversized reply: %v", err)
			}
			if strings.Contains(err.Error(), "xxxx") || len(err.Error()) > 1000 {
				t.Fatalf("the error carries the reply's bytes: %.300s", err)
			}
			if sent := h.server.Flooded(); sent > 64<<20 {
				t.Fatalf("%d MB of the flood were read; reading should stop near 12 MB", sent>>20)
			}
			if grew > 200<<20 {
				t.Fatalf("the heap grew by %d MB during the flood", grew>>20)
			}
			h.checkAll(t, id)
			if res, err := h.agent.Prompt(context.Background(), id, "flood me"); err != nil || !res.Resumed || res.Reply != "Short and sweet." {
				t.Fatalf("resuming after the flood: %+v, %v", res, err)
			}
		})
	}
}

// watchHeap samples the heap until the returned function is called, which reports its growth at the peak.
func watchHeap(t *testing.T) func() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, top := ms.HeapInuse, ms.HeapInuse
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapInuse)
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return top - base
	}
}

// stuckSource is a tool source whose only tool blocks, ignoring its context, until release is closed.
type stuckSource struct{ release chan struct{} }

func (stuckSource) Name() string { return "stuck" }
func (stuckSource) Specs() []provider.ToolSpec {
	return []provider.ToolSpec{{Name: "stuck__wait", Description: "waits", Parameters: json.RawMessage(`{"type":"object"}`)}}
}
func (s stuckSource) Call(context.Context, string, string) (string, bool) {
	<-s.release
	return "too late", false
}

// TestAgent_CancelEndsATurnWhateverTheToolDoes: a tool that ignores its context does not hold a cancelled
// turn; the call's recorded result says it was cancelled, and the next prompt runs.
func TestAgent_CancelEndsATurnWhateverTheToolDoes(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "stuck__wait", `{}`)}},
		{Text: "Back."},
	}})
	src := stuckSource{release: make(chan struct{})}
	t.Cleanup(func() { close(src.release) })
	h.agent.Tools.SetSources([]tools.Source{src})
	id := h.session(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !slices.ContainsFunc(h.eventsSoFar(), func(e agent.Event) bool { return e.Kind == agent.EventToolCall }) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	done := make(chan error, 1)
	go func() { _, err := h.agent.Prompt(ctx, id, "wait"); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, agent.ErrTurnStopped) || !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled turn: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancel did not end the turn: it waited for a tool that ignores it")
	}
	view, _ := h.store.Transcript(id)
	if last := view.Messages[len(view.Messages)-1]; last.ToolCallID != "c1" || !last.IsError || !strings.Contains(last.Text, "cancelled") {
		t.Fatalf("recorded result: %+v", last)
	}
	h.checkAll(t, id)
	if res, err := h.agent.Prompt(context.Background(), id, "again"); err != nil || res.Reply != "Back." {
		t.Fatalf("next prompt: %+v, %v", res, err)
	}
}

// TestAgent_RecoverAMidTranscriptCall recovers a call left unanswered in the middle of an imported session:
// the recorded result goes right after its call, so the provider accepts the transcript.
func TestAgent_RecoverAMidTranscriptCall(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{{Text: "verified"}}})
	sess, err := h.store.CreateSession(storage.Session{Workspace: h.ws}, []transcript.Message{
		{Role: transcript.RoleUser, Text: "migrate the db"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "call_mig", Name: "run_command", Arguments: `{"command":"./migrate"}`},
			{ID: "call_ok", Name: "list_dir", Arguments: `{"path":"."}`}}},
		{Role: transcript.RoleTool, ToolCallID: "call_ok", Text: "main.go"},
		{Role: transcript.RoleUser, Text: "[interrupted by the user]"},
		{Role: transcript.RoleAssistant, Text: "Stopped."},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Recover(h.store, sess.ID, true); err != nil {
		t.Fatal(err)
	}
	v, _ := h.store.Transcript(sess.ID)
	if v.Messages[3].ToolCallID != "call_mig" || v.Messages[3].Text != agent.RecoveryNote || len(v.Messages) != 6 {
		t.Fatalf("the recovered result is not next to its call: %+v", v.Messages[3])
	}
	if _, err := h.agent.Prompt(context.Background(), sess.ID, "check it"); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, sess.ID)
}

// TestAgent_StatusDuringATurn reads the meter while a tool runs: the running call is in flight, not
// uncertain, and the meter counts what the turn appended.
func TestAgent_StatusDuringATurn(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "list_dir", `{"path":"."}`)}},
		{Text: "done"},
	}})
	id := h.session(t)
	var during agent.Status
	h.agent.OnEvent = func(e agent.Event) {
		if e.Kind == agent.EventToolCall {
			during, _ = h.agent.Status(id)
		}
	}
	if _, err := h.agent.Prompt(context.Background(), id, "list"); err != nil {
		t.Fatal(err)
	}
	if during.Messages != 2 || len(during.UncertainCalls) != 0 || during.TranscriptChars == 0 {
		t.Fatalf("status during the tool call: %+v", during)
	}
	after, err := h.agent.Status(id)
	v, _ := h.store.Transcript(id)
	if err != nil || after.Messages != len(v.Messages) || after.TranscriptChars != transcript.TotalChars(v.Messages) {
		t.Fatalf("status after the turn: %+v (transcript has %d messages, %d chars)", after, len(v.Messages), transcript.TotalChars(v.Messages))
	}
	// Something else changes the session: the meter notices and re-reads.
	_, _ = h.store.Append(id, transcript.Message{Role: transcript.RoleUser, Text: "external"})
	if st, _ := h.agent.Status(id); st.Messages != len(v.Messages)+1 {
		t.Fatalf("stale meter: %d messages", st.Messages)
	}
}

// model2 opens the Responses-mode provider of harness h's test server.
func model2(t *testing.T, h *harness) provider.Chat {
	cfg := h.agent.Settings()
	p, _ := cfg.ActiveProvider()
	p.Responses = true
	m, err := provider.Open(p, provider.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAgent_TokenCapSurvivesARestart: the tokens of earlier replies are counted from the store, so a new
// process (a new agent on the same store) still enforces limits.maxTokens.
func TestAgent_TokenCapSurvivesARestart(t *testing.T) {
	cfg := config.Default()
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{{Text: "first", PromptTokens: 80}, {Text: "never"}}})
	id := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), id, "one"); err != nil {
		t.Fatal(err)
	}
	cfg = h.agent.Settings()
	cfg.Limits.MaxTokens = 50
	restarted, err := agent.New(context.Background(), h.shared, h.store, cfg, h.ws, nil, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Tools.Close()
	if _, err := restarted.Prompt(context.Background(), id, "two"); err == nil || !strings.Contains(err.Error(), "limits.maxTokens (81 tokens used of 50)") {
		t.Fatalf("token cap after a restart: %v", err)
	}
	if v, _ := h.store.Transcript(id); len(v.Messages) != 2 {
		t.Fatalf("a refused prompt was stored: %d messages", len(v.Messages))
	}
}

// TestAgent_TokenCapCountsEveryWindow: limits.maxTokens counts the turns every window ran on the session,
// not only this window's: a window whose own turns used little still refuses once another's passed the cap.
func TestAgent_TokenCapCountsEveryWindow(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxTokens = 100
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{{Text: "first", PromptTokens: 10}, {Text: "second", PromptTokens: 95}, {Text: "never"}}})
	id := h.session(t)
	other, err := agent.New(context.Background(), h.shared, h.store, h.agent.Settings(), h.ws, nil, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Tools.Close()
	if _, err := h.agent.Prompt(context.Background(), id, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Prompt(context.Background(), id, "two"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.Prompt(context.Background(), id, "three"); err == nil || !strings.Contains(err.Error(), "limits.maxTokens (107 tokens used of 100)") {
		t.Fatalf("the first window after the other passed the cap: %v", err)
	}
	if h.server.Remaining() != 1 {
		t.Fatal("a model call was made past the cap")
	}
	h.checkAll(t, id)
}

// TestAgent_SmallWindowModel: a model with a 16k window and the default summarizer budget (16000 tokens, as
// large as the window) still compacts, with the summarizer's output budget and chunks fitted to the window,
// and no request, agent or summarizer, is larger than the window minus its output budget.
func TestAgent_SmallWindowModel(t *testing.T) {
	const window = 16_384
	var replies []providertest.Reply
	for i := 0; i < 30; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call(fmt.Sprintf("call_%02d", i), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' s"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "All done."})
	h := newHarness(t, config.Default(), providertest.Script{
		Models:  []map[string]any{{"id": "alisio-test", "context_length": window}},
		Replies: replies})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "run the command thirty times. Keep the output.")
	if err != nil || res.Reply != "All done." {
		t.Fatalf("%v %+v", err, res)
	}
	for _, e := range h.events {
		if e.Kind == agent.EventCompaction && e.Compaction.Type == compaction.EventFailed {
			t.Fatalf("a compaction failed on a small-window model: %s", e.Compaction.Message)
		}
	}
	v, _ := h.store.Transcript(id)
	if !v.Messages[0].Summary {
		t.Fatal("no compaction in a session that outgrew a 16k window")
	}
	h.checkAll(t, id)
	cfg := h.agent.Settings()
	if err := h.server.CheckBudget((window-cfg.Limits.MaxOutputTokens)*4 - h.agent.Tools.CatalogChars()); err != nil {
		t.Fatal(err)
	}
	if err := h.server.CheckSummaryWindow(window); err != nil {
		t.Fatal(err)
	}
}

// TestAgent_ProviderCountsMoreTokensThanTheEstimate: a provider whose tokenizer counts 2.5 chars a token (code
// and JSON at real APIs count nearer 3 than the estimate's 4) refuses the request that outgrows its 16k window,
// with each API's own error (Chat Completions and Anthropic give their counts, the Responses API none). The
// turn does not fail: the session is measured by the provider's count from then on, compacted, and the call
// sent again; later requests fit at once.
func TestAgent_ProviderCountsMoreTokensThanTheEstimate(t *testing.T) {
	const window = 16_384
	for _, kind := range []string{"openai", "anthropic", "responses"} {
		t.Run(kind, func(t *testing.T) {
			var replies []providertest.Reply
			for i := 0; i < 30; i++ {
				replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
					call(fmt.Sprintf("call_%02d", i), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' s"}`)}})
			}
			replies = append(replies, providertest.Reply{Text: "All done."})
			h := newHarnessFor(t, kind, config.Default(), providertest.Script{
				Models:  []map[string]any{{"id": "alisio-test", "context_length": window}},
				Replies: replies, CharsPerToken: 2.5, EnforceWindow: true})
			id := h.session(t)
			res, err := h.agent.Prompt(context.Background(), id, "run the command thirty times. Keep the output.")
			if err != nil || res.Reply != "All done." {
				t.Fatalf("%v %+v", err, res)
			}
			t.Logf("%s: %d requests refused as over the window", kind, h.server.OverWindow())
			if n := h.server.OverWindow(); n < 1 || n > 3 {
				t.Errorf("%d requests refused as over the window; want the first only (or a few, learning)", n)
			}
			v, _ := h.store.Transcript(id)
			if !v.Messages[0].Summary {
				t.Fatal("no compaction after the provider refused a request over its window")
			}
			h.checkAll(t, id)
			st, err := h.agent.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			if st.EstimatedTokens <= (st.UsedChars+st.ToolsChars)/4+1 {
				t.Errorf("the meter counts %d tokens for %d chars: not the provider's count", st.EstimatedTokens, st.UsedChars)
			}
		})
	}
}

// TestAgent_ProviderMeasureOutlivesTheDaemon: what a refusal taught is kept with the session. A daemon started
// afterwards (a new agent over the same store) sizes the session by the provider's count from its first
// request, so the provider refuses nothing more; the command line's figures are the same; a session sent to
// another model is measured afresh.
func TestAgent_ProviderMeasureOutlivesTheDaemon(t *testing.T) {
	var replies []providertest.Reply
	for i := 0; i < 50; i++ {
		if i == 30 {
			replies = append(replies, providertest.Reply{Text: "All done."})
		}
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call(fmt.Sprintf("call_%02d", i), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' s"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Done again."})
	h := newHarness(t, config.Default(), providertest.Script{
		Models:  []map[string]any{{"id": "alisio-test", "context_length": 16_384}},
		Replies: replies, CharsPerToken: 2.5, EnforceWindow: true})
	id := h.session(t)
	if res, err := h.agent.Prompt(context.Background(), id, "run the command thirty times. Keep the output."); err != nil || res.Reply != "All done." {
		t.Fatalf("%v %+v", err, res)
	}
	refused := h.server.OverWindow()
	if refused < 1 {
		t.Fatal("the provider refused nothing: the test does not reach the window")
	}
	cfg := h.agent.Settings()
	restarted, err := agent.New(context.Background(), agent.NewShared(), h.store, cfg, h.ws, nil, provider.Options{MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer restarted.Close()
	before, err := restarted.Status(id)
	if err != nil {
		t.Fatal(err)
	}
	if before.EstimatedTokens <= (before.UsedChars+before.ToolsChars)/4+1 {
		t.Errorf("after a restart the meter counts %d tokens for %d chars: the provider's count was forgotten", before.EstimatedTokens, before.UsedChars)
	}
	cli := agent.NewContextManager(h.store, cfg, h.ws, compaction.Offline{})
	if st, err := cli.Status(id); err != nil || st.EstimatedTokens != before.EstimatedTokens {
		t.Errorf("the command line counts %d tokens (%v), the daemon %d", st.EstimatedTokens, err, before.EstimatedTokens)
	}
	if res, err := restarted.Prompt(context.Background(), id, "run it twenty times more."); err != nil || res.Reply != "Done again." {
		t.Fatalf("%v %+v", err, res)
	}
	if n := h.server.OverWindow(); n != refused {
		t.Errorf("the provider refused %d more requests after the restart; want none", n-refused)
	}
	h.checkAll(t, id)
	other := cfg
	other.Provider.Model = "another-model"
	if st, err := agent.NewContextManager(h.store, other, h.ws, compaction.Offline{}).Status(id); err != nil || st.EstimatedTokens > (st.UsedChars+st.ToolsChars)/4+1 {
		t.Errorf("with another model the session is still measured by the first one's count: %d tokens for %d chars (%v)", st.EstimatedTokens, st.UsedChars, err)
	}
	if err := h.store.DeleteSession(id); err != nil {
		t.Fatal(err)
	}
	if _, kept, err := h.store.Measure(id); kept || err != nil {
		t.Errorf("the measure outlived its session (%v)", err)
	}
}

// TestAgent_WindowSmallerThanConfigured: provider.contextWindow says 32k, the model takes 16k. The provider's
// refusal names its window; the session takes it (the meter says where it came from), compacts and goes on.
func TestAgent_WindowSmallerThanConfigured(t *testing.T) {
	var replies []providertest.Reply
	for i := 0; i < 30; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call(fmt.Sprintf("call_%02d", i), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' s"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "All done."})
	cfg := config.Default()
	cfg.Provider.ContextWindow = 32_768
	h := newHarness(t, cfg, providertest.Script{
		Models:  []map[string]any{{"id": "alisio-test", "context_length": 16_384}},
		Replies: replies, EnforceWindow: true})
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "run the command thirty times. Keep the output.")
	if err != nil || res.Reply != "All done." {
		t.Fatalf("%v %+v", err, res)
	}
	st, err := h.agent.Status(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := h.server.OverWindow(); n != 1 || st.Window != 16_384 || api.WindowFrom(st.WindowSource) != "said by the provider when it refused a larger request" {
		t.Errorf("%d refusals; the session's window %d (%s)", n, st.Window, api.WindowFrom(st.WindowSource))
	}
	h.checkAll(t, id)
}

// TestAgent_RequestOverTheWindowIsNeverSent: with automatic compaction off and a 16k window, a session whose
// kept turn outgrows the window is reduced to fit it; when even that cannot fit, the turn fails with the F1
// error naming the window, and nothing over the window was sent.
func TestAgent_RequestOverTheWindowIsNeverSent(t *testing.T) {
	const window = 16_384
	cfg := config.Default()
	cfg.Compaction.Auto = false
	var replies []providertest.Reply
	for i := 0; i < 40; i++ {
		replies = append(replies, providertest.Reply{Text: strings.Repeat("t", 1500), ToolCalls: []providertest.ToolCall{
			call(fmt.Sprintf("call_%02d", i), "run_command", `{"command":"head -c 3000 /dev/zero | tr '\\0' s"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "All done."})
	h := newHarness(t, cfg, providertest.Script{
		Models:  []map[string]any{{"id": "alisio-test", "context_length": window}},
		Replies: replies})
	id := h.session(t)
	_, err := h.agent.Prompt(context.Background(), id, "go")
	var be *compaction.BudgetError
	if !errors.As(err, &be) || be.Window != window || !strings.Contains(err.Error(), "16384-token context window") {
		t.Fatalf("want the F1 error naming the window, got %v", err)
	}
	if err := h.server.CheckBudget((window-cfg.Limits.MaxOutputTokens)*4 - h.agent.Tools.CatalogChars()); err != nil {
		t.Fatal(err)
	}
	if len(h.server.Requests()) < 3 {
		t.Fatal("the session should have run several calls before it outgrew the window")
	}
}

// TestAgent_ImportedInstructionsAreSent: an imported session's system prompt is sent with every request,
// after the agent's own, and the meter counts exactly what is sent.
func TestAgent_ImportedInstructionsAreSent(t *testing.T) {
	imported := "You are the imported agent. " + strings.Repeat("Follow the house style. ", 400)
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{{Text: "ok"}}})
	sess, err := h.store.CreateSession(storage.Session{Workspace: h.ws, Instructions: []string{imported}},
		[]transcript.Message{{Role: transcript.RoleUser, Text: "earlier"}, {Role: transcript.RoleAssistant, Text: "noted"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := h.agent.Status(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.agent.Prompt(context.Background(), sess.ID, "continue"); err != nil {
		t.Fatal(err)
	}
	msgs := h.server.Requests()[0]["messages"].([]any)
	system, _ := msgs[0].(map[string]any)["content"].(string)
	if !strings.Contains(system, imported) || !strings.HasPrefix(system, agent.DefaultInstructions) {
		t.Fatalf("the imported system prompt was not sent (%d chars sent)", len(system))
	}
	if st.InstructionsChars != utf8.RuneCountInString(system) {
		t.Fatalf("the meter counts %d chars of instructions; %d were sent", st.InstructionsChars, utf8.RuneCountInString(system))
	}
	h.checkAll(t, sess.ID)
}

// TestAgent_MemoryPlugin (PH3): a compaction asks the summarizer, in the same call, for durable memories; the
// new ones are saved for the workspace without duplicates, injected after the checkpoint and reported; new
// sessions of the workspace start with them; turned off, nothing is asked or saved.
func TestAgent_MemoryPlugin(t *testing.T) {
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 20_000
	var replies []providertest.Reply
	for i := 0; i < 12; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{
			call(fmt.Sprintf("call_m%02d", i), "run_command", `{"command":"head -c 2500 /dev/zero | tr '\\0' m"}`)}})
	}
	replies = append(replies, providertest.Reply{Text: "Done."}, providertest.Reply{Text: "Hello again."})
	h := newHarness(t, cfg, providertest.Script{Replies: replies})
	id := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), id, "Always run gofmt before committing."); err != nil {
		t.Fatal(err)
	}
	h.checkAll(t, id)
	var summaryReqs int
	for _, schema := range summarizerRequests(h.server.Requests()) {
		if strings.Contains(schema, `"memories"`) {
			summaryReqs++
		}
	}
	mems, err := h.store.Memories(h.ws)
	if err != nil || len(mems) != 1 || mems[0].Text != "Always run gofmt before committing." || mems[0].Session != id || summaryReqs == 0 {
		t.Fatalf("memories %+v (%v), %d summarizer requests asked for them", mems, err, summaryReqs)
	}
	reported := false
	for _, e := range h.events {
		if e.Kind == agent.EventCompaction && e.Compaction.Type == compaction.EventCompleted {
			for _, r := range e.Compaction.Plugins {
				reported = reported || r.Plugin == "memory" && strings.Contains(r.Summary, "(1 for this workspace)")
			}
		}
	}
	v, _ := h.store.Transcript(id)
	if !reported || !strings.Contains(v.Messages[0].Text, "## Context from the memory plugin") || !strings.Contains(v.Messages[0].Text, "- Always run gofmt before committing.") {
		t.Fatalf("reported %v; checkpoint %q", reported, v.Messages[0].Text)
	}
	// Another compaction of the same material saves nothing twice.
	if _, err := h.agent.Compact(context.Background(), id, "", nil); err != nil && !errors.Is(err, compaction.ErrNothingToSummarize) && !errors.Is(err, compaction.ErrNoGain) {
		t.Fatal(err)
	}
	if again, _ := h.store.Memories(h.ws); len(again) != 1 {
		t.Fatalf("duplicates: %+v", again)
	}
	// A new session of the workspace starts with the memories; the model receives them.
	sess, err := h.agent.NewSession("next", h.ws)
	if err != nil || len(sess.Instructions) != 1 || !strings.Contains(sess.Instructions[0], "Always run gofmt") {
		t.Fatalf("%+v %v", sess, err)
	}
	if _, err := h.agent.Prompt(context.Background(), sess.ID, "hi"); err != nil {
		t.Fatal(err)
	}
	last := h.server.Requests()[len(h.server.Requests())-1]
	if !strings.Contains(stringify(last["messages"]), "Always run gofmt before committing.") {
		t.Fatal("the new session's request does not carry the memories")
	}
	// Turned off: a new session starts without them and compactions do not ask for them.
	off := h.agent.Settings()
	off.Memory.Enabled = false
	h.agent.SetSettings(off)
	if plain, _ := h.agent.NewSession("plain", h.ws); len(plain.Instructions) != 0 {
		t.Fatalf("memory off, yet the session starts with %v", plain.Instructions)
	}
}

// TestAgent_MCPToolsJoinTheCatalog: an MCP server's tools join the catalog under its name, the model calls
// them like the built-ins, each source's size is shown, a 100k+ char catalog never causes F1 (TC1: it counts
// for the window, never for the hard limit), and disabling the server applies live.
func TestAgent_MCPToolsJoinTheCatalog(t *testing.T) {
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "docs"}, nil)
	srv.AddTool(&sdkmcp.Tool{Name: "lookup", Description: strings.Repeat("Looks things up in the project wiki. ", 3_000),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)},
		func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: "found it: use make test"}}}, nil
		})
	hs := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, nil))
	defer hs.Close()
	cfg := config.Default()
	cfg.Limits.MaxContextChars = 50_000
	cfg.MCPServers = map[string]config.MCPServer{"docs": {URL: hs.URL}}
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "docs__lookup", `{"q":"how to test"}`)}}, {Text: "Use make test."}}})
	h.agent.SyncMCP(context.Background(), h.agent.Settings())
	d := h.agent.Tools.Describe()
	if len(d.Sources) != 2 || d.Sources[1].Source != "docs" || d.Sources[1].Count != 1 || d.Sources[1].Chars < 100_000 || d.CatalogChars < 100_000 {
		t.Fatalf("catalog %+v", d)
	}
	id := h.session(t)
	res, err := h.agent.Prompt(context.Background(), id, "how do I run the tests?")
	if err != nil || res.Reply != "Use make test." {
		t.Fatalf("a 100k-char catalog must not fail the turn (TC1): %v %+v", err, res)
	}
	v, _ := h.store.Transcript(id)
	if v.Messages[2].Text != "found it: use make test" || v.Messages[2].ToolCallID != "c1" {
		t.Fatalf("the MCP result: %+v", v.Messages[2])
	}
	if st, _ := h.agent.Status(id); st.ToolsChars < 100_000 || st.WindowFraction <= st.CharsFraction {
		t.Fatalf("the meter must count the catalog for the window: %+v", st)
	}
	off := h.agent.Settings()
	off.MCPServers = map[string]config.MCPServer{"docs": {URL: hs.URL, Disabled: true}}
	h.agent.SyncMCP(context.Background(), off)
	if d := h.agent.Tools.Describe(); len(d.Sources) != 1 || h.agent.ToolsChars() > 10_000 {
		t.Fatalf("after disabling: %+v", d)
	}
	if out, isErr := h.agent.Tools.Run(context.Background(), "docs__lookup", `{}`); !isErr || !strings.Contains(out, "unknown tool") {
		t.Fatalf("a disabled server's tool: %q", out)
	}
}

// TestAgent_ExternalHookAndMemoryInOneCompaction: the memory plugin and an external hook in one manual
// compaction through the local test provider: one summarizer request carries both plugins' fields in its
// schema, the external hook receives only its own field, its context lands after the checkpoint, and both
// reports reach compaction_completed.
func TestAgent_ExternalHookAndMemoryInOneCompaction(t *testing.T) {
	dir := t.TempDir()
	hook := filepath.Join(dir, "hook.sh")
	if err := os.WriteFile(hook, []byte(`#!/bin/sh
input=$(cat)
case "$input" in
*'"hook":"beforeCompact"'*) printf '{"instructions":"list risks","outputFields":{"risks":{"type":"array","items":{"type":"string"}}}}' ;;
*) printf '%s' "$input" > "$RECORD"; printf '{"injectContext":"Risk register updated.","report":{"summary":"risks noted"}}' ;;
esac
`), 0o755); err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(dir, "after.json")
	cfg := config.Default()
	cfg.Plugins = []config.Plugin{{Name: "risks", Command: hook, Env: map[string]string{"RECORD": record}}}
	h := newHarness(t, cfg, providertest.Script{})
	sess, err := h.store.CreateSession(storage.Session{Workspace: h.ws}, synthetic.Generate(synthetic.Default(60)))
	if err != nil {
		t.Fatal(err)
	}
	var events []compaction.Event
	res, err := h.agent.Compact(context.Background(), sess.ID, "", func(e compaction.Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	summaries := summarizerRequests(h.server.Requests())
	if len(summaries) != 1 || !strings.Contains(summaries[0], `"risks"`) || !strings.Contains(summaries[0], `"memories"`) || !strings.Contains(summaries[0], "list risks") {
		t.Fatalf("%d summarizer requests: %v", len(summaries), summaries)
	}
	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var after struct {
		Hook       string
		Fields     map[string]any
		Checkpoint map[string]any
	}
	if err := json.Unmarshal(raw, &after); err != nil || after.Hook != "afterCompact" || len(after.Fields) != 1 || after.Fields["risks"] == nil || after.Checkpoint["goal"] == nil {
		t.Fatalf("the hook received %s", raw)
	}
	text := res.View[0].Text
	if i, j := strings.Index(text, "## Goal"), strings.Index(text, "Risk register updated."); i < 0 || j < i {
		t.Fatalf("checkpoint %q", text)
	}
	completed := events[len(events)-1]
	if completed.Type != compaction.EventCompleted || len(completed.Plugins) != 2 || completed.Plugins[1].Summary != "risks noted" {
		t.Fatalf("event %+v", completed)
	}
}

// TestAgent_UnreachableProviderKeepsTheKnownWindow: when the provider that reported a model's window does not
// answer later (a restart while it is down), the agent keeps that window, says where it came from, and never
// falls back to a guess that would make the meter drop (72 % → 3 % was seen).
func TestAgent_UnreachableProviderKeepsTheKnownWindow(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Models: []map[string]any{{"id": "alisio-test", "context_length": 8192}}})
	if h.agent.Window != 8192 || h.agent.WindowSource != "models" {
		t.Fatalf("window %d from %q", h.agent.Window, h.agent.WindowSource)
	}
	cfg := h.agent.Settings()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	unknown := cfg
	unknown.Provider.BaseURL, unknown.Provider.Model = down.URL+"/v1", "never-seen"
	a, err := agent.New(context.Background(), h.shared, h.store, unknown, h.ws, nil, provider.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	if a.Window != 0 {
		t.Errorf("a model never seen got window %d (%s); want unknown", a.Window, a.WindowSource)
	}
	h.http.Close()
	a, err = agent.New(context.Background(), h.shared, h.store, cfg, h.ws, nil, provider.Options{MaxRetries: 0})
	if err != nil {
		t.Fatal(err)
	}
	if a.Window != 8192 || !strings.Contains(a.WindowSource, "last known") {
		t.Fatalf("after the provider went away: window %d from %q; want the last known 8192", a.Window, a.WindowSource)
	}
}
