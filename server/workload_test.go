package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// readingWorkload is a scripted session of turns that each read two files of 5k–70k chars with read_file
// and then answer: the shape that made small windows summarize in almost every turn.
type readingWorkload struct {
	Turns  int
	Window int // tokens, as the provider's model list reports it
	// Kind is the provider's kind ("openai" by default, or "anthropic"); PromptCache is provider.promptCache
	// ("off": requests built as before prompt caching).
	Kind, PromptCache string
	// SummaryDelay is how long each summary takes, Pause the time between a reply and the next prompt (the user
	// reading and typing); NoBackground turns background compaction off (compaction.backgroundAt 0).
	SummaryDelay, Pause time.Duration
	NoBackground        bool
	// Threshold is compaction.threshold (0: the default), with compaction.backgroundAt 0.05 under it.
	Threshold float64
}

// workloadFigures are what the workload measures.
type workloadFigures struct {
	SummarizerCalls int
	// PrefixShare is the part of all agent requests (in chars of their messages) that repeats the start of
	// the request before it, which a provider's prompt cache can reuse.
	PrefixShare float64
	// LargestRequest is the largest agent request against the window (chars/4 tokens of its messages and
	// tools over the window).
	LargestRequest float64
	// ReadKept is, over every read_file result the model received, the share of the file's chars it got.
	ReadKept float64
	// ModelRequests counts the agent's model calls.
	ModelRequests int
	// Billed is the input the provider bills, at the cache prices (cached input at 10 %, cache writes at
	// 125 %), over what all of it would cost uncached; SummarizerBill is the summarizer calls' share of it.
	Billed, SummarizerBill float64
	// BilledTokens is what Billed is a share of, in tokens at the uncached price: what the user pays for;
	// InputTokens is all the input sent.
	BilledTokens, InputTokens float64
	// Billed's parts, each over the same uncached price: the agent requests' cache reads, the rest of their
	// input (what each adds, uncached or written to the cache), the whole of each first request after a rewrite
	// of the transcript's start (a compaction or a reduction: what it keeps is sent again), and the summarizer.
	CacheReads, Uncached, AfterRewrite, Summarizer float64
	// rewritten marks, agent request by agent request, the ones that do not begin with most of the one before.
	rewritten []bool
	// Floor is what these same requests would bill with a cache that held every piece already sent (the tool
	// catalog, the instructions, each message) wherever it stood: the least any prompt cache, prefix-based or
	// not, can bill them, and so the least any order of their parts can reach.
	Floor float64
	// Breakpoints are the fewest and most cache_control breakpoints of an agent request (Anthropic).
	MinBreakpoints, MaxBreakpoints int
	// LongestTurn is the longest time a prompt took to answer (the provider answers at once: what it waited
	// for is compaction).
	LongestTurn time.Duration
}

func (w readingWorkload) run(t testing.TB) workloadFigures {
	t.Helper()
	ws := t.TempDir()
	rng := rand.New(rand.NewPCG(19, uint64(w.Turns)))
	var replies []providertest.Reply
	sizes := map[string]int{}
	for turn := 0; turn < w.Turns; turn++ {
		var calls []providertest.ToolCall
		for k := 0; k < 2; k++ {
			name := fmt.Sprintf("src/file%02d_%d.go", turn, k)
			size := 5_000 + rng.IntN(65_001)
			sizes[name] = size
			writeSource(t, filepath.Join(ws, name), size, rng)
			calls = append(calls, providertest.ToolCall{ID: fmt.Sprintf("call_%d_%d", turn, k), Name: "read_file",
				Arguments: fmt.Sprintf(`{"path":%q}`, name)})
		}
		replies = append(replies, providertest.Reply{ToolCalls: calls},
			providertest.Reply{Text: fmt.Sprintf("Turn %d: both files read; %s.", turn, strings.Repeat("notes on what they do ", 10))})
	}
	prov := providertest.New(providertest.Script{Replies: replies, SummaryDelayMs: int(w.SummaryDelay.Milliseconds()),
		Models: []map[string]any{{"id": "alisio-test", "object": "model", "context_length": w.Window}}})
	hs := httptest.NewServer(prov)
	t.Cleanup(hs.Close)
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(t.TempDir(), "store")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg := config.Default()
	cfg.Provider = config.Provider{Kind: "openai", BaseURL: hs.URL + "/v1", Model: "alisio-test", PromptCache: w.PromptCache}
	if w.Kind == "anthropic" {
		cfg.Provider.Kind, cfg.Provider.BaseURL = "anthropic", hs.URL
	}
	if w.NoBackground {
		cfg.Compaction.BackgroundAt = 0
	}
	if w.Threshold > 0 {
		cfg.Compaction.Threshold, cfg.Compaction.BackgroundAt = w.Threshold, w.Threshold-0.05
	}
	c := servertest.Start(t, server.Options{Config: cfg, Store: st, Provider: provider.Options{MaxRetries: 0}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := c.Initialize(ctx, ws, nil, false, false); err != nil {
		t.Fatal(err)
	}
	var session string
	var longest time.Duration
	for turn := 0; turn < w.Turns; turn++ {
		var res struct{ Session string }
		started := time.Now()
		if err := c.Call(ctx, "alisio/prompt", map[string]any{"session": session, "text": fmt.Sprintf("Turn %d: read the two new files and tell me what they do.", turn)}, &res); err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		longest = max(longest, time.Since(started))
		session = res.Session
		time.Sleep(w.Pause)
	}
	if v := prov.Violations(); len(v) > 0 {
		t.Fatalf("the provider received invalid requests: %v", v)
	}
	view, err := st.Transcript(session)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(view.Messages); err != nil {
		t.Fatal(err)
	}
	f := measure(t, prov.Requests(), sizes, w.Window)
	f.bill(prov)
	f.LongestTurn = longest

	return f
}

// bill computes the billed figures from the usage prov reported, and the breakpoints of the agent requests.
func (f *workloadFigures) bill(prov *providertest.Server) {
	var full, billed, summaries, reads, fresh, rewritten float64
	calls, agentCalls := 0, 0
	for _, u := range prov.Usages() {
		cost := float64(u.Prompt-u.Cached-u.Writes) + 0.1*float64(u.Cached) + 1.25*float64(u.Writes)
		full += float64(u.Prompt)
		billed += cost
		switch {
		case u.Summary:
			summaries += cost
			calls++
		case agentCalls < len(f.rewritten) && f.rewritten[agentCalls]: // the kept part is sent again
			rewritten += cost
		default:
			reads += 0.1 * float64(u.Cached)
			fresh += cost - 0.1*float64(u.Cached)
		}
		if !u.Summary {
			agentCalls++
		}
	}
	f.Billed, f.SummarizerBill, f.SummarizerCalls = billed/max(full, 1), summaries/max(billed, 1), calls
	f.BilledTokens, f.InputTokens = billed, full
	f.CacheReads, f.Uncached, f.AfterRewrite, f.Summarizer = reads/max(full, 1), fresh/max(full, 1), rewritten/max(full, 1), summaries/max(full, 1)
	f.Floor = anyPositionFloor(prov.Requests())
	f.MinBreakpoints = -1
	for _, req := range prov.Requests() {
		if _, tools := req["tools"]; !tools || asksCheckpoint(req) {
			continue // a summarizer request
		}
		raw, _ := json.Marshal(req)
		n := strings.Count(string(raw), `"cache_control"`)
		if f.MinBreakpoints < 0 || n < f.MinBreakpoints {
			f.MinBreakpoints = n
		}
		f.MaxBreakpoints = max(f.MaxBreakpoints, n)
	}
}

// cacheControl matches a cache_control field as a request's JSON carries it, to compare pieces without it.
var cacheControl = regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)

// anyPositionFloor is requests' bill, at 10 % for a piece already sent in an earlier request wherever it stood
// and at 100 % for a new one (no write premium), over all of them at 100 % (tokens as chars/4). A piece is the
// tool catalog, the instructions, a message, or for Anthropic a system or content block.
func anyPositionFloor(requests []map[string]any) float64 {
	seen := map[string]bool{}
	var full, billed float64
	add := func(v any) {
		if v == nil {
			return
		}
		raw, _ := json.Marshal(v)
		text := cacheControl.ReplaceAllString(string(raw), "")
		tokens := float64(len(text)) / 4
		full += tokens
		if seen[text] {
			billed += 0.1 * tokens
		} else {
			billed += tokens
			seen[text] = true
		}
	}
	for _, req := range requests {
		add(req["tools"])
		add(req["instructions"])
		if blocks, ok := req["system"].([]any); ok { // Anthropic caches system blocks one by one
			for _, b := range blocks {
				add(b)
			}
		} else {
			add(req["system"])
		}
		for _, key := range []string{"messages", "input"} {
			list, _ := req[key].([]any)
			for _, m := range list {
				msg, _ := m.(map[string]any)
				blocks, ok := msg["content"].([]any) // Anthropic: a message's content blocks
				if !ok {
					add(m)
					continue
				}
				for _, b := range blocks {
					add(map[string]any{"role": msg["role"], "block": b})
				}
			}
		}
	}
	return billed / max(full, 1)
}

// measure computes the figures from what the provider received.
func measure(t testing.TB, requests []map[string]any, sizes map[string]int, window int) workloadFigures {
	var f workloadFigures
	var prev string
	var shared, total, keptChars, fileChars int
	for _, req := range requests {
		if rf, _ := req["response_format"].(map[string]any); rf != nil || asksCheckpoint(req) {
			f.SummarizerCalls++
			continue
		}
		f.ModelRequests++
		msgs, _ := json.Marshal(req["messages"])
		tools, _ := json.Marshal(req["tools"])
		body := string(tools) + string(msgs) // providers cache tools, then messages, in request order
		common := commonPrefix(prev, body)
		shared += common
		f.rewritten = append(f.rewritten, common < len(prev)/2)
		total += len(body)
		prev = body
		f.LargestRequest = max(f.LargestRequest, float64(len(body))/4/float64(window))
		if f.LargestRequest > 1 {
			t.Fatalf("a request of about %d tokens was sent to a %d-token window", len(body)/4, window)
		}
	}
	// Each read's result as the model last saw it, against the file.
	results := map[string]int{}
	calls := map[string]string{}
	for _, req := range requests {
		list, _ := req["messages"].([]any)
		for _, raw := range list {
			m, _ := raw.(map[string]any)
			if tcs, ok := m["tool_calls"].([]any); ok {
				for _, tc := range tcs {
					c, _ := tc.(map[string]any)
					fn, _ := c["function"].(map[string]any)
					var args struct{ Path string }
					_ = json.Unmarshal([]byte(fmt.Sprint(fn["arguments"])), &args)
					calls[fmt.Sprint(c["id"])] = args.Path
				}
			}
			if m["role"] == "tool" {
				id := fmt.Sprint(m["tool_call_id"])
				if _, seen := results[id]; !seen {
					results[id] = len(fmt.Sprint(m["content"]))
				}
			}
		}
	}
	for id, chars := range results {
		if size, ok := sizes[calls[id]]; ok {
			keptChars += min(chars, size)
			fileChars += size
		}
	}
	f.PrefixShare = float64(shared) / float64(max(total, 1))
	f.ReadKept = float64(keptChars) / float64(max(fileChars, 1))
	return f
}

// asksCheckpoint: req is a summary request in the suffix form, the agent's request with the checkpoint asked
// for in a last user message.
func asksCheckpoint(req map[string]any) bool {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return false
	}
	last, _ := json.Marshal(msgs[len(msgs)-1])
	return strings.Contains(string(last), compaction.SuffixMarker)
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// writeSource writes a Go-looking file of about size chars, in lines.
func writeSource(t testing.TB, path string, size int, rng *rand.Rand) {
	var b strings.Builder
	for line := 1; b.Len() < size; line++ {
		fmt.Fprintf(&b, "\tv%d := compute(%d, %q) // step %d\n", line, rng.IntN(1000), strings.Repeat("x", rng.IntN(30)), line)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()[:size]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReadingWorkload: a 40-turn session reading two files a turn stays within the window, never splits a
// call from its result, and at 32k tokens summarizes at most 15 times while keeping most of each request a
// repeat of the one before (the prompt cache).
func TestReadingWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("a 40-turn workload")
	}
	for _, tc := range []struct {
		window       int
		maxSummaries int
		minPrefix    float64
	}{{32_768, 15, 0.80}, {131_072, 6, 0.875}} { // 128k: 5 calls and 88.6% before checkpoints quoted the user's words (docs/performance.md)
		t.Run(fmt.Sprint(tc.window), func(t *testing.T) {
			f := readingWorkload{Turns: 40, Window: tc.window}.run(t)
			t.Logf("%+v", f)
			if f.SummarizerCalls > tc.maxSummaries || f.PrefixShare < tc.minPrefix {
				t.Fatalf("window %d: %d summarizer calls (at most %d), reusable prefix %.1f%% (at least %.0f%%)",
					tc.window, f.SummarizerCalls, tc.maxSummaries, 100*f.PrefixShare, 100*tc.minPrefix)
			}
		})
	}
}

// BenchmarkReadingWorkload reports the workload's figures (docs/performance.md): summarizer calls, the
// reusable prefix share, the largest request against the window and the share of each file read that
// reached the model.
func BenchmarkReadingWorkload(b *testing.B) {
	for _, window := range []int{32_768, 131_072} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			var f workloadFigures
			for i := 0; i < b.N; i++ {
				f = readingWorkload{Turns: 40, Window: window}.run(b)
			}
			b.ReportMetric(float64(f.SummarizerCalls), "summaries")
			b.ReportMetric(100*f.PrefixShare, "prefix-%")
			b.ReportMetric(100*f.LargestRequest, "max-request-%window")
			b.ReportMetric(100*f.ReadKept, "read-kept-%")
			b.ReportMetric(float64(f.ModelRequests), "model-calls")
		})
	}
}

// BenchmarkPromptCacheBill reports what the workload's input costs at each provider's cache prices (the test
// provider models both caches), with prompt caching off (requests as before it) and on, side by side in one
// run: the billed share of the uncached price, the summarizer calls' share of the bill, and for Anthropic the
// breakpoints per request (docs/performance.md).
func BenchmarkPromptCacheBill(b *testing.B) {
	for _, kind := range []string{"openai", "anthropic"} {
		for _, window := range []int{32_768, 131_072} {
			for _, cache := range []string{"off", "5m"} {
				b.Run(fmt.Sprintf("kind=%s/window=%d/cache=%s", kind, window, cache), func(b *testing.B) {
					var f workloadFigures
					for i := 0; i < b.N; i++ {
						f = readingWorkload{Turns: 40, Window: window, Kind: kind, PromptCache: cache}.run(b)
					}
					b.ReportMetric(100*f.Billed, "billed-%")
					b.ReportMetric(100*f.SummarizerBill, "summarizer-bill-%")
					// The parts of billed-%, each a share of the uncached price.
					b.ReportMetric(100*f.CacheReads, "cache-reads-%")
					b.ReportMetric(100*f.Uncached, "uncached-%")
					b.ReportMetric(100*f.AfterRewrite, "after-rewrite-%")
					b.ReportMetric(100*f.Summarizer, "summarizer-%")
					b.ReportMetric(100*f.Floor, "any-position-floor-%")
					b.ReportMetric(f.BilledTokens/1000, "billed-ktok")
					b.ReportMetric(float64(f.SummarizerCalls), "summaries")
					b.ReportMetric(float64(f.MaxBreakpoints), "max-breakpoints")
					b.ReportMetric(float64(f.MinBreakpoints), "min-breakpoints")
				})
			}
		}
	}
}

// BenchmarkPromptCacheBillByThreshold reports, for the OpenAI kind at 128k with the prompt cache on, the billed
// share and what it is a share of, at three compaction thresholds in one run: the share falls as compaction
// comes later while the tokens the user pays for rise (docs/performance.md, issue 29's targets).
func BenchmarkPromptCacheBillByThreshold(b *testing.B) {
	for _, threshold := range []float64{0.7, 0.85, 0.9} {
		b.Run(fmt.Sprintf("threshold=%.2f", threshold), func(b *testing.B) {
			var f workloadFigures
			for i := 0; i < b.N; i++ {
				f = readingWorkload{Turns: 40, Window: 131_072, PromptCache: "5m", Threshold: threshold}.run(b)
			}
			b.ReportMetric(100*f.Billed, "billed-%")
			b.ReportMetric(f.BilledTokens/1000, "billed-ktok")
			b.ReportMetric(f.InputTokens/1000, "input-ktok")
			b.ReportMetric(100*f.Floor, "any-position-floor-%")
			b.ReportMetric(float64(f.SummarizerCalls), "summaries")
		})
	}
}

// BenchmarkBackgroundCompactionWait reports the longest time a prompt waited, at a 32k window, when each
// summary takes 2 s and the user takes 2 s between a reply and the next prompt: with background compaction
// (compaction.backgroundAt, the default) and without, in one run (docs/performance.md). It takes about a
// minute and a half.
func BenchmarkBackgroundCompactionWait(b *testing.B) {
	for _, off := range []bool{true, false} {
		b.Run(fmt.Sprintf("background=%v", !off), func(b *testing.B) {
			var f workloadFigures
			for i := 0; i < b.N; i++ {
				f = readingWorkload{Turns: 16, Window: 32_768, SummaryDelay: 2 * time.Second, Pause: 2 * time.Second, NoBackground: off}.run(b)
			}
			b.ReportMetric(f.LongestTurn.Seconds(), "longest-turn-s")
			b.ReportMetric(float64(f.SummarizerCalls), "summaries")
		})
	}
}
