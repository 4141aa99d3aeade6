package providertest

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func decode(t *testing.T, s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestPairingChecks(t *testing.T) {
	for _, tc := range []struct{ name, req, want string }{
		{"openai ok", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","tool_calls":[{"id":"c1"},{"id":"c2"}]},{"role":"tool","tool_call_id":"c1"},{"role":"tool","tool_call_id":"c2"},{"role":"user","content":"b"}]}`, ""},
		{"openai result without call", `{"messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"c9"}]}`, "must be a response to a preceding message"},
		{"openai call without result", `{"messages":[{"role":"assistant","tool_calls":[{"id":"c1"}]},{"role":"user","content":"b"}]}`, "missing c1"},
	} {
		if got := checkPairing(decode(t, tc.req)); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, req, want string }{
		{"anthropic ok", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1"}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1"}]}]}`, ""},
		{"anthropic orphan tool_use", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1"}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`, "`tool_use` ids were found without `tool_result` blocks immediately after: t1"},
		{"anthropic orphan tool_result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t7"}]}]}`, "unexpected `tool_use_id`"},
		{"anthropic first message", `{"messages":[{"role":"assistant","content":"x"}]}`, "first message"},
	} {
		if got := checkAnthropicPairing(decode(t, tc.req)); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q; want %q", tc.name, got, tc.want)
		}
	}
}

// TestPaced: with PaceMs the text is streamed piece by piece with that wait after each piece, and arrives whole.
func TestPaced(t *testing.T) {
	text := strings.Repeat("seven c", 10) // ten pieces of seven characters
	srv := New(Script{PaceMs: 30, Replies: []Reply{{Text: text}}})
	var waits []time.Duration
	srv.sleep = func(d time.Duration) { waits = append(waits, d) }
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(`{"model":"alisio-test","stream":true,"messages":[{"role":"user","content":"hi"}]}`)))
	var got strings.Builder
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		var chunk struct {
			Choices []struct{ Delta struct{ Content string } }
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &chunk) == nil && len(chunk.Choices) > 0 {
			got.WriteString(chunk.Choices[0].Delta.Content)
		}
	}
	if got.String() != text || len(waits) != 10 || waits[0] != 30*time.Millisecond {
		t.Errorf("streamed %q with %d waits (%v)", got.String(), len(waits), waits)
	}
}
