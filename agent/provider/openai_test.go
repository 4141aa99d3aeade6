package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/openai/openai-go/v3/option"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/compaction/compactiontest"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// reply is one scripted answer of the fake Chat Completions server.
type reply struct {
	status       int
	content      string
	finishReason string
	raw          string // a raw body instead of a completion
	delay        time.Duration
}

// chatServer serves POST /v1/chat/completions with the OpenAI wire format (the shape recorded from the API)
// from a script, and records the request bodies.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	script   []reply
	requests []map[string]any
}

func newChatServer(t *testing.T, script ...reply) *chatServer {
	s := &chatServer{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		_ = json.Unmarshal(body, &req)
		s.mu.Lock()
		s.requests = append(s.requests, req)
		if r.URL.Path != "/v1/chat/completions" || len(s.script) == 0 {
			s.mu.Unlock()
			http.Error(w, `{"error":{"message":"unexpected request","type":"invalid_request_error"}}`, http.StatusNotFound)
			return
		}
		rep := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 {
			w.WriteHeader(rep.status)
		}
		if rep.raw != "" {
			_, _ = io.WriteString(w, rep.raw)
			return
		}
		content, _ := json.Marshal(rep.content)
		fmt.Fprintf(w, `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,"model":"gpt-4.1-2025-04-14",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":%q}],`+
			`"usage":{"prompt_tokens":1117,"completion_tokens":46,"total_tokens":1163,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},`+
			`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},`+
			`"service_tier":"default","system_fingerprint":"fp_ee1d74bde0"}`, content, rep.finishReason)
	}))
	t.Cleanup(s.Close)
	return s
}

func newProvider(t *testing.T, url string) *provider.OpenAI {
	p, err := provider.NewOpenAI(config.Provider{Kind: "openai", BaseURL: url + "/v1", Model: "gpt-4.1"}, option.WithMaxRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const checkpointJSON = `{"goal":"Fix the bug","instructions":["Do not change the public API"],"discoveries":["d"],"accomplished":["a"],"currentState":"s","nextSteps":["n"],"relevantFiles":[{"path":"server/server.go","reason":"the bug"}]}`

func TestOpenAISummarizer_StructuredOutputOverTheWire(t *testing.T) {
	srv := newChatServer(t, reply{content: checkpointJSON, finishReason: "stop"})
	view := synthetic.Generate(synthetic.Default(80))
	res, err := compaction.Compact(context.Background(), compaction.Input{View: view},
		compaction.Options{KeepTurns: 2, MaxOutputTokens: 16000, Focus: "the server"}, newProvider(t, srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := compactiontest.Check(view, res.Rewrite, nil, compactiontest.Limits{KeepTurns: 2}); err != nil {
		t.Fatal(err)
	}
	req := srv.requests[0]
	rf, _ := req["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "checkpoint" || js["strict"] != true || req["max_tokens"] != float64(16000) || req["model"] != "gpt-4.1" {
		t.Fatalf("request %v", req)
	}
	msgs := req["messages"].([]any)
	if !strings.Contains(fmt.Sprint(msgs[1]), "the server") {
		t.Fatal("focus not sent")
	}
	if res.Checkpoint.Instructions[0] != "Do not change the public API" || res.Checkpoint.Partial {
		t.Fatalf("checkpoint %+v", res.Checkpoint)
	}
}

func TestOpenAISummarizer_FinishReasonLength(t *testing.T) {
	cut := checkpointJSON[:strings.Index(checkpointJSON, `"nextSteps"`)+5]
	srv := newChatServer(t,
		reply{content: cut, finishReason: "length"},
		reply{content: `{"nextSteps":["run the tests"],"relevantFiles":[]}`, finishReason: "stop"})
	view := synthetic.Generate(synthetic.Default(80))
	var events []compaction.Event
	res, err := compaction.Compact(context.Background(), compaction.Input{View: view},
		compaction.Options{KeepTurns: 2, MaxOutputTokens: 500}, newProvider(t, srv.URL), func(e compaction.Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if !last.Partial || strings.Join(last.RecoveredFields, ",") != "nextSteps,relevantFiles" || res.Checkpoint.NextSteps[0] != "run the tests" {
		t.Fatalf("event %+v", last)
	}
	rf := srv.requests[1]["response_format"].(map[string]any)["json_schema"].(map[string]any)["schema"].(map[string]any)
	if len(rf["properties"].(map[string]any)) != 2 {
		t.Fatal("the follow-up must ask only for the missing fields")
	}
}

func TestOpenAISummarizer_Errors(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(40))
	for _, tc := range []struct {
		name string
		rep  reply
		want string
	}{
		{"server error keeps the provider's message", reply{status: 500, raw: `{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}`}, "HTTP 500: The server had an error"},
		{"rate limited", reply{status: 429, raw: `{"error":{"message":"Rate limit reached for gpt-4.1","type":"requests","code":"rate_limit_exceeded"}}`}, "HTTP 429: Rate limit reached"},
		{"garbage body", reply{raw: `<html>bad gateway</html>`}, "provider request failed"},
		{"nothing usable after a cut", reply{content: `{"goal":"`, finishReason: "length"}, "compaction.maxOutputTokens"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newChatServer(t, tc.rep)
			_, err := compaction.Compact(context.Background(), compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 1000}, newProvider(t, srv.URL), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v; want %q", err, tc.want)
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		srv := newChatServer(t, reply{content: checkpointJSON, finishReason: "stop", delay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := compaction.Compact(ctx, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, newProvider(t, srv.URL), nil)
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("err %v", err)
		}
	})
}

func TestNewOpenAI_Settings(t *testing.T) {
	if _, err := provider.NewOpenAI(config.Provider{Kind: "openai"}); err == nil || !strings.Contains(err.Error(), "provider.model") {
		t.Fatalf("missing model: %v", err)
	}
	t.Setenv("ALISIO_TEST_KEY", "")
	if _, err := provider.NewOpenAI(config.Provider{Model: "m", APIKeyEnv: "ALISIO_TEST_KEY"}); err == nil || !strings.Contains(err.Error(), "ALISIO_TEST_KEY") {
		t.Fatalf("empty key variable: %v", err)
	}
}
