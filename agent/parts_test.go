package agent_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestContextParts: the breakdown of Show Context names each kind, sorts tool outputs by size, and adds up to
// the transcript's size, on a hand-made transcript and on generated ones.
func TestContextParts(t *testing.T) {
	msgs := []transcript.Message{
		{Role: transcript.RoleUser, Summary: true, Text: strings.Repeat("c", 1000)},
		{Role: transcript.RoleUser, Text: "fix it"},
		{Role: transcript.RoleAssistant, Text: "ok", Reasoning: strings.Repeat("r", 50), ToolCalls: []transcript.ToolCall{{ID: "1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Role: transcript.RoleTool, ToolCallID: "1", ToolName: "read_file", Text: strings.Repeat("x", 3000)},
		{Role: transcript.RoleTool, ToolCallID: "2", ToolName: "run_command", Text: "é" + strings.Repeat("y", 499)},
		{Role: transcript.RoleTool, ToolCallID: "3", Text: "z"},
	}
	got := fmt.Sprint(agent.ContextParts(msgs))
	want := "[{checkpoint 1000} {user text 6} {assistant text and calls 26} {reasoning 50} {tool output: read_file 3000} {tool output: run_command 500} {tool output: unknown 1}]"
	if got != want {
		t.Fatalf("parts\n got %s\nwant %s", got, want)
	}
	for _, n := range []int{10, 500, 3000} {
		gen := synthetic.Generate(synthetic.Default(n))
		sum := 0
		for _, p := range agent.ContextParts(gen) {
			sum += p.Chars
		}
		if total := transcript.TotalChars(gen); sum != total {
			t.Fatalf("%d messages: parts add up to %d, the transcript has %d chars", n, sum, total)
		}
	}
}
