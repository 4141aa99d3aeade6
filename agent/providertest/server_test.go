package providertest

import (
	"encoding/json"
	"strings"
	"testing"
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
