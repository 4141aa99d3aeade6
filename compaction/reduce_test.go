package compaction_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/compaction/compactiontest"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func TestReduce_LargestFirstStopsWhenItFits(t *testing.T) {
	msgs := []transcript.Message{
		{ID: "u", Role: transcript.RoleUser, Text: strings.Repeat("u", 3000)},
		asst("", "a", "b"),
		{ID: "ra", Role: transcript.RoleTool, ToolCallID: "a", Text: strings.Repeat("x", 30_000)},
		{ID: "rb", Role: transcript.RoleTool, ToolCallID: "b", Text: strings.Repeat("y", 30_000)},
		{ID: "c", Role: transcript.RoleUser, Summary: true, Text: strings.Repeat("c", 20_000)},
	}
	total := transcript.TotalChars(msgs)
	// Cutting one 30k result to 8000 is enough: only the earlier of the two equal ones is cut (ties by position).
	target := total - 22_000
	red := compaction.Reduce(msgs, target)
	if !red.Fits || len(red.Replace) != 1 {
		t.Fatalf("fits=%v, %d cut; want 1 cut", red.Fits, len(red.Replace))
	}
	cut, ok := red.Replace[2]
	if !ok || utf8.RuneCountInString(cut.Text) != 8000 || !strings.HasSuffix(cut.Text, compaction.Marker) || cut.OriginalID != "ra" || !cut.Truncated {
		t.Fatalf("cut %+v", cut)
	}
	if red.Chars != total-22_000 {
		t.Fatalf("chars %d; want %d", red.Chars, total-22_000)
	}
	rw := transcript.Rewrite{BaseLen: len(msgs), Replace: red.Replace}
	if err := compactiontest.Check(msgs, rw, nil, compactiontest.Limits{MaxContextChars: target, KeepTurns: -1}); err != nil {
		t.Fatal(err)
	}
}

func TestReduce_FloorsAndCheckpointsNeverCut(t *testing.T) {
	msgs := []transcript.Message{
		{ID: "c", Role: transcript.RoleUser, Summary: true, Text: strings.Repeat("c", 50_000)},
		{ID: "u", Role: transcript.RoleUser, Text: strings.Repeat("u", 50_000)},
		asst("", "a"),
		{ID: "r", Role: transcript.RoleTool, ToolCallID: "a", Text: strings.Repeat("x", 50_000)},
	}
	red := compaction.Reduce(msgs, 4000)
	if red.Fits {
		t.Fatal("cannot fit: the checkpoint alone is 50k")
	}
	if _, cut := red.Replace[0]; cut {
		t.Fatal("R5: checkpoint cut")
	}
	if n := utf8.RuneCountInString(red.Replace[1].Text); n != 1024 {
		t.Fatalf("user text floor: %d; want 1024", n)
	}
	if n := utf8.RuneCountInString(red.Replace[3].Text); n != 512 {
		t.Fatalf("tool floor: %d; want 512", n)
	}
	if red.Replace[1].OriginalID != "u" || red.Replace[3].OriginalID != "r" {
		t.Fatal("R4: originals not named")
	}
}

func TestReduce_ArgumentsStayValidJSON(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"path": "a.go", "content": strings.Repeat("<&>\"é", 10_000), "list": []any{1, "short", strings.Repeat("z", 9000)}})
	msgs := []transcript.Message{
		{ID: "u", Role: transcript.RoleUser, Text: "write it"},
		{ID: "a", Role: transcript.RoleAssistant, Text: "ok", ToolCalls: []transcript.ToolCall{{ID: "call_1", Name: "write_file", Arguments: string(args)}}},
		{ID: "r", Role: transcript.RoleTool, ToolCallID: "call_1", Text: "done"},
	}
	red := compaction.Reduce(msgs, 1500)
	cut := red.Replace[1]
	if cut.ToolCalls[0].ID != "call_1" || cut.ToolCalls[0].Name != "write_file" {
		t.Fatal("R3a: ID or name changed")
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(cut.ToolCalls[0].Arguments), &v); err != nil {
		t.Fatalf("R3a: arguments not valid JSON: %v", err)
	}
	if v["path"] != "a.go" || !strings.HasSuffix(v["content"].(string), compaction.Marker) {
		t.Fatalf("R3a: %v", v["path"])
	}
	if cut.Chars() > 1024 {
		t.Fatalf("assistant message still %d chars", cut.Chars())
	}
	if err := compactiontest.Check(msgs, transcript.Rewrite{BaseLen: 3, Replace: red.Replace}, nil, compactiontest.Limits{KeepTurns: -1}); err != nil {
		t.Fatal(err)
	}
}

func checkReduce(t interface{ Fatalf(string, ...any) }, msgs []transcript.Message, target int) {
	red := compaction.Reduce(msgs, target)
	rw := transcript.Rewrite{BaseLen: len(msgs), Replace: red.Replace}
	after := rw.Apply(msgs)
	if got := transcript.TotalChars(after); got != red.Chars {
		t.Fatalf("reported %d chars; transcript has %d", red.Chars, got)
	}
	if red.Fits != (red.Chars <= target) {
		t.Fatalf("fits=%v with %d chars for target %d", red.Fits, red.Chars, target)
	}
	var err error
	if !red.Fits {
		err = &compaction.BudgetError{}
	}
	if e := compactiontest.Check(msgs, rw, err, compactiontest.Limits{MaxContextChars: target, KeepTurns: -1}); e != nil {
		t.Fatalf("target %d: %v", target, e)
	}
	// Fewest changes: undoing the last cut of any message would not fit (stop as soon as it fits).
	if red.Fits && len(red.Replace) > 0 && transcript.TotalChars(msgs) <= target {
		t.Fatalf("cut although it already fit")
	}
}

func TestReduce_Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := fromBytes(rapid.SliceOfN(rapid.Byte(), 0, 60).Draw(t, "program"), rapid.Bool().Draw(t, "closed"))
		total := transcript.TotalChars(msgs)
		checkReduce(t, msgs, rapid.IntRange(0, total+10).Draw(t, "target"))
	})
}

func FuzzReduce(f *testing.F) {
	f.Add([]byte{0, 30, 3, 230, 22, 6, 7, 1}, uint32(4000))
	f.Add([]byte{15, 255, 7, 6, 6}, uint32(100))
	f.Fuzz(func(t *testing.T, program []byte, target uint32) {
		checkReduce(t, fromBytes(program, true), int(target%200_000))
	})
}

// TestReduce_SignedThinkingDroppedWholeNeverCut: Anthropic thinking blocks are signed; a cut block would be
// rejected by the API, so reduction drops whole blocks, oldest first, and keeps the others byte-exact.
func TestReduce_SignedThinkingDroppedWholeNeverCut(t *testing.T) {
	first := transcript.ThinkingBlock{Type: "thinking", Thinking: strings.Repeat("a", 12_000), Signature: "sig-1"}
	redacted := transcript.ThinkingBlock{Type: "redacted_thinking", Data: "opaque"}
	second := transcript.ThinkingBlock{Type: "thinking", Thinking: strings.Repeat("b", 3_000), Signature: "sig-2"}
	a := asst("", "a")
	a.Text = "Running it."
	a.Items = []transcript.ProviderItem{transcript.ThinkingItem(first, nil), transcript.ThinkingItem(redacted, nil), transcript.ThinkingItem(second, nil)}
	a.Reasoning = transcript.ReasoningOf([]transcript.ThinkingBlock{first, redacted, second})
	msgs := []transcript.Message{
		{ID: "u", Role: transcript.RoleUser, Text: "go"},
		a,
		{ID: "r", Role: transcript.RoleTool, ToolCallID: "a", Text: "ok"},
	}
	red := compaction.Reduce(msgs, transcript.TotalChars(msgs)-2_000)
	got, ok := red.Replace[1]
	if !red.Fits || !ok {
		t.Fatalf("fits=%v cut=%v", red.Fits, ok)
	}
	blocks, _ := got.ThinkingBlocks()
	// The first block (12k) is enough: the redacted block and the second block stay as they were.
	if len(blocks) != 2 || blocks[0] != redacted || blocks[1] != second || got.Reasoning != second.Thinking || got.Text != a.Text {
		t.Fatalf("kept %d blocks, reasoning %d chars, text %q", len(blocks), len(got.Reasoning), got.Text)
	}
	rw := transcript.Rewrite{BaseLen: len(msgs), Replace: red.Replace}
	if err := compactiontest.Check(msgs, rw, nil, compactiontest.Limits{KeepTurns: -1}); err != nil {
		t.Fatal(err)
	}
}
