package provider

import (
	"net/http"
	"testing"
)

// FuzzOverflow: whatever a server's refusal says, reading it as a context overflow never fails, counts are
// never negative, and only a 400 or a 413 is one.
func FuzzOverflow(f *testing.F) {
	f.Add(400, "context_length_exceeded", "invalid_request_error", "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).", "")
	f.Add(400, "", "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum", "")
	f.Add(400, "400", "exceed_context_size_error", "the request exceeds the available context size", `{"n_prompt_tokens":9000,"n_ctx":8192}`)
	f.Add(413, "", "", "too many tokens: 99999999999999999999999 in the messages", "")
	f.Add(500, "", "api_error", "prompt is too long", "")
	f.Fuzz(func(t *testing.T, status int, code, typ, message, raw string) {
		e, ok := overflow(status, code, typ, message, raw)
		if ok != (e != nil) {
			t.Fatalf("ok %v with error %v", ok, e)
		}
		if ok && status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
			t.Fatalf("HTTP %d read as an overflow", status)
		}
		if ok && (e.InputTokens < 0 || e.Window < 0 || e.Message != message) {
			t.Fatalf("%+v", e)
		}
	})
}
