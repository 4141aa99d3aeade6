package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// cacheScript reads a 12,000-char file in the first turn and answers two more prompts: requests long enough
// for a prompt cache (1,024 tokens and up).
func cacheScript() *providertest.Script {
	return &providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"big.txt"}`}}},
		{Text: "read"}, {Text: "second"}, {Text: "third"},
	}}
}

// threePrompts runs the cache script's three prompts in one session through the daemon and returns its ID.
func (e *env) threePrompts(t *testing.T) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.ws, "big.txt"), []byte(strings.Repeat("cached line of the file\n", 500)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.init(t, nil)
	session := ""
	for _, text := range []string{"read big.txt", "and again", "once more"} {
		var res api.PromptResult
		if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": session, "text": text}, &res); err != nil {
			t.Fatal(err)
		}
		session = res.Session
	}
	return session
}

// TestPromptCache: through the daemon, each provider kind's requests are built for its prompt cache —
// OpenAI's carry the session as prompt_cache_key, Anthropic's 1 to 4 cache_control breakpoints — and the
// cached tokens the provider reports reach alisio/status: the meter's cache figures and its sentence.
func TestPromptCache(t *testing.T) {
	for _, kind := range []string{"openai", "anthropic"} {
		t.Run(kind, func(t *testing.T) {
			e := start(t, cacheScript(), func(c *config.Config) {
				if kind == "anthropic" {
					c.Provider.Kind, c.Provider.BaseURL = "anthropic", strings.TrimSuffix(c.Provider.BaseURL, "/v1")
				}
			})
			session := e.threePrompts(t)
			if v := e.provider.Violations(); len(v) > 0 {
				t.Fatalf("invalid requests: %v", v)
			}
			for i, req := range e.provider.Requests() {
				raw, _ := json.Marshal(req)
				switch marks := strings.Count(string(raw), `"cache_control"`); {
				case kind == "openai" && (req["prompt_cache_key"] != session || marks != 0):
					t.Errorf("request %d: prompt_cache_key %v, %d breakpoints", i, req["prompt_cache_key"], marks)
				case kind == "anthropic" && (marks < 1 || marks > 4 || req["prompt_cache_key"] != nil):
					t.Errorf("request %d: %d breakpoints", i, marks)
				}
			}
			var st api.Status
			if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"session": session}, &st); err != nil {
				t.Fatal(err)
			}
			c := st.Cache
			if c == nil || st.Usage == nil || c.Cached == 0 || c.LastCached == 0 || c.LastCached > c.LastInput ||
				!strings.HasPrefix(c.Text, "prompt cache: the last request read ") || (kind == "anthropic") != (c.CacheWrite > 0) {
				t.Fatalf("the cache's figures: %+v (usage %+v)", c, st.Usage)
			}
			t.Log(c.Text)
		})
	}
}

// TestPromptCacheOnServersWithout: a server without a prompt cache (llama.cpp, vLLM, Ollama) keeps working and
// the meter says nothing was read from a cache; a strict one that refuses prompt_cache_key gets that request
// again without it, and no later request carries it.
func TestPromptCacheOnServersWithout(t *testing.T) {
	script := cacheScript()
	script.NoCache, script.Strict = true, true
	e := start(t, script, nil)
	session := e.threePrompts(t)
	v := e.provider.Violations()
	if len(v) != 1 || v[0] != "Unrecognized request argument supplied: prompt_cache_key" {
		t.Fatalf("violations: %v", v)
	}
	reqs := e.provider.Requests()
	for i, req := range reqs[1:] {
		if _, ok := req["prompt_cache_key"]; ok {
			t.Errorf("request %d still carries prompt_cache_key", i+1)
		}
	}
	var st api.Status
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"session": session}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Cache == nil || st.Cache.Cached != 0 || !strings.HasPrefix(st.Cache.Text, "prompt cache: nothing read from it yet") {
		t.Fatalf("the cache's figures: %+v", st.Cache)
	}
}
