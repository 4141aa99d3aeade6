package provider_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestContextOverflowError: each server's refusal of a request over the model's window, as its API sends it,
// reaches the agent as a ContextOverflowError with the counts it gives, through the real SDKs; another 400
// does not.
func TestContextOverflowError(t *testing.T) {
	for _, tc := range []struct {
		name, kind, body string
		status           int
		overflow         bool
		input, window    int
	}{
		{"OpenAI", "openai", `{"error":{"message":"This model's maximum context length is 128000 tokens. However, you requested 140000 tokens (124000 in the messages, 16000 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			400, true, 124000, 128000},
		{"OpenAI, older words", "openai", `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`,
			400, true, 9000, 8192},
		{"Responses API", "responses", `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`,
			400, true, 0, 0},
		{"vLLM", "openai", `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","param":null,"code":400}`,
			400, true, 5000, 4096},
		{"llama.cpp", "openai", `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`,
			400, true, 9000, 8192},
		{"Anthropic", "anthropic", `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}`,
			400, true, 210000, 200000},
		{"Anthropic, with max_tokens", "anthropic", `{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 190000 + 20000 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`,
			400, true, 190000, 200000},
		{"another refusal", "openai", `{"error":{"message":"Invalid value for 'temperature'.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}`,
			400, false, 0, 0},
		{"a server error", "anthropic", `{"type":"error","error":{"type":"api_error","message":"prompt is too long for this replica"}}`,
			500, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer hs.Close()
			p := config.Provider{Kind: "openai", BaseURL: hs.URL + "/v1", Model: "m", Responses: tc.kind == "responses"}
			if tc.kind == "anthropic" {
				p = config.Provider{Kind: "anthropic", BaseURL: hs.URL, Model: "m"}
			}
			m, err := provider.Open(p, provider.Options{MaxRetries: 0})
			if err != nil {
				t.Fatal(err)
			}
			_, err = m.Complete(context.Background(), provider.Request{Messages: []transcript.Message{{Role: transcript.RoleUser, Text: "hi"}}, MaxOutputTokens: 100}, func(provider.Delta) {})
			var over *provider.ContextOverflowError
			if got := errors.As(err, &over); got != tc.overflow {
				t.Fatalf("overflow %v, want %v: %v", got, tc.overflow, err)
			}
			if over != nil && (over.InputTokens != tc.input || over.Window != tc.window || over.Message == "") {
				t.Errorf("counts %d / %d, want %d / %d (%q)", over.InputTokens, over.Window, tc.input, tc.window, over.Message)
			}
		})
	}
}
