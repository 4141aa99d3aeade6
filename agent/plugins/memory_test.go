package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// TestMemory_Bounded: a memory longer than MaxMemoryChars is saved cut at a word; what the memories send stays
// within memory.maxChars, the newest first, with a line saying how many older ones are left out, while every
// memory stays stored; the report says how many are sent.
func TestMemory_Bounded(t *testing.T) {
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(t.TempDir(), "store")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := &Memory{Store: st, MaxChars: 1000}
	after := func(texts ...string) compaction.AfterResult {
		t.Helper()
		raw, _ := json.Marshal(texts)
		res, err := m.AfterCompact(context.Background(), compaction.HookInput{Workspace: "/ws", Session: "s1", Fields: map[string]json.RawMessage{memoriesField: raw}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	long := strings.Repeat("the build needs the vendored protobuf compiler ", 20)
	res := after(long)
	ms, _ := st.Memories("/ws")
	if len(ms) != 1 || len(ms[0].Text) > MaxMemoryChars || !strings.HasSuffix(ms[0].Text, " the…") || !utf8.ValidString(ms[0].Text) {
		t.Fatalf("a long memory was saved as %q (%d bytes)", ms[0].Text, len(ms[0].Text))
	}
	if !strings.Contains(res.InjectContext, ms[0].Text) {
		t.Errorf("the memory is not sent: %q", res.InjectContext)
	}
	var texts []string
	for i := range 40 {
		texts = append(texts, fmt.Sprintf("Convention %02d: run make lint before each commit.", i))
	}
	res = after(texts...)
	ms, _ = st.Memories("/ws")
	if len(ms) != 41 {
		t.Fatalf("%d memories stored, want all 41", len(ms))
	}
	text, sent := Render(ms, 1000)
	if len(text) > 1000 || sent == 0 || sent >= 41 || !strings.Contains(text, "Convention 39") || strings.Contains(text, "Convention 00") ||
		!strings.Contains(text, fmt.Sprintf("(%d older memories of this workspace are not listed here.)", 41-sent)) {
		t.Errorf("rendered %d of 41 in %d chars:\n%s", sent, len(text), text)
	}
	if res.InjectContext != text || !strings.Contains(res.Report.Summary, fmt.Sprintf("41 for this workspace; the newest %d fit memory.maxChars", sent)) {
		t.Errorf("report %q", res.Report.Summary)
	}
	if all, n := Render(ms, 0); n != 41 || strings.Contains(all, "older memor") {
		t.Errorf("without a bound %d are listed", n)
	}
	if none, n := Render(nil, 1000); none != "" || n != 0 {
		t.Errorf("no memories render %q", none)
	}
}

// TestMemory_SeveralLines: a memory of several lines stays one item of the list, its later lines indented
// under its first, and the bound counts the indentation.
func TestMemory_SeveralLines(t *testing.T) {
	ms := []storage.Memory{{ID: "1", Text: "Release steps:\n1. make dist\n2. tag it"}, {ID: "2", Text: "Use tabs."}}
	text, sent := Render(ms, 0)
	if sent != 2 || !strings.Contains(text, "\n- Release steps:\n  1. make dist\n  2. tag it\n- Use tabs.") {
		t.Errorf("rendered:\n%s", text)
	}
	bounded, n := Render(ms, len(text))
	if n != 2 || bounded != text {
		t.Errorf("a bound of exactly the list's size sends %d:\n%s", n, bounded)
	}
	if bounded, _ := Render(ms, len(text)-1); len(bounded) > len(text)-1 {
		t.Errorf("a bound one short is passed: %d chars", len(bounded))
	}
}

// TestCut: a cut text ends at a word where one is near, else at a rune, never past the limit.
func TestCut(t *testing.T) {
	for _, tc := range []struct {
		text  string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"one two three four", 12, "one two…"},
		{strings.Repeat("é", 20), 11, "éééé…"},
	} {
		if got := cut(tc.text, tc.limit); got != tc.want || len(got) > tc.limit {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
		}
	}
}
