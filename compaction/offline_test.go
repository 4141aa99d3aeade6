package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// offlineCheckpoint runs the offline summarizer on span after prev.
func offlineCheckpoint(t *testing.T, span []transcript.Message, prev *compaction.Checkpoint) compaction.Checkpoint {
	t.Helper()
	rep, err := compaction.Offline{}.Summarize(context.Background(), compaction.SummaryRequest{Span: span, Previous: prev})
	if err != nil {
		t.Fatal(err)
	}
	var cp compaction.Checkpoint
	if err := json.Unmarshal([]byte(rep.Text), &cp); err != nil {
		t.Fatal(err)
	}
	return cp
}

// callsSpan is a user message, then n assistant messages of one call each with its result.
func callsSpan(n int) []transcript.Message {
	span := []transcript.Message{{Role: transcript.RoleUser, Text: "Fix it.\nNever push.\nNever push."}}
	for i := range n {
		id := fmt.Sprint("c", i)
		span = append(span, transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: id, Name: "run", Arguments: fmt.Sprint(i)}}},
			transcript.Message{Role: transcript.RoleTool, ToolCallID: id, Text: fmt.Sprint("out ", i, "\n", strings.Repeat("more ", 100))})
	}
	return span
}

// The accomplished entries are the previous checkpoint's, then one per call; past 40 they are a note and the
// last 39, whichever of the two lists those come from.
func TestOffline_AccomplishedKeepsTheLastEntries(t *testing.T) {
	prev := &compaction.Checkpoint{Accomplished: []string{"p0", "p1", "p2"}}
	for _, tc := range []struct {
		calls int
		prev  *compaction.Checkpoint
		want  []string
	}{
		{calls: 2, prev: prev, want: []string{"p0", "p1", "p2", "run 0 → out 0", "run 1 → out 1"}},
		{calls: 37, prev: prev, want: append([]string{"p0", "p1", "p2"}, runs(0, 37)...)},
		{calls: 38, prev: prev, want: append([]string{"(earlier tool work omitted)", "p2"}, runs(0, 38)...)},
		{calls: 100, prev: prev, want: append([]string{"(earlier tool work omitted)"}, runs(61, 100)...)},
		{calls: 100, want: append([]string{"(earlier tool work omitted)"}, runs(61, 100)...)},
	} {
		got := offlineCheckpoint(t, callsSpan(tc.calls), tc.prev).Accomplished
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Fatalf("%d calls after %v:\n got %q\nwant %q", tc.calls, tc.prev, got, tc.want)
		}
	}
	if strings.Join(prev.Accomplished, "|") != "p0|p1|p2" {
		t.Fatalf("the previous checkpoint was changed: %q", prev.Accomplished)
	}
}

func runs(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("run %d → out %d", i, i))
	}
	return out
}

// A repeated constraint is kept once, at its first place, also when the previous checkpoint had it.
func TestOffline_InstructionsOnce(t *testing.T) {
	span := append(callsSpan(1), transcript.Message{Role: transcript.RoleUser, Text: "Always run the tests.\nNever push."})
	got := offlineCheckpoint(t, span, &compaction.Checkpoint{Instructions: []string{"Always run the tests."}}).Instructions
	if strings.Join(got, "|") != "Always run the tests.|Never push." {
		t.Fatalf("instructions %q", got)
	}
}

// spanOnly records the offline summarizer's requests without being it (so it gets the rendered prompt).
type spanOnly struct{ got []compaction.SummaryRequest }

func (s *spanOnly) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	s.got = append(s.got, req)
	return compaction.Offline{}.Summarize(ctx, req)
}

// The offline summarizer reads the span itself (the prompt a model would get is not rendered for it): its
// checkpoint is the one it writes from the same request with the prompt.
func TestOffline_SameCheckpointWithoutPrompt(t *testing.T) {
	span := append(callsSpan(3), transcript.Message{Role: transcript.RoleUser, Text: "next"})
	opts := compaction.Options{KeepTurns: 1, MaxOutputTokens: 1000}
	withPrompt := &spanOnly{}
	want, err := compaction.Compact(context.Background(), compaction.Input{View: span}, opts, withPrompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(withPrompt.got) != 1 || !strings.Contains(withPrompt.got[0].Prompt, "<history>") {
		t.Fatalf("a summarizer other than the offline one gets the rendered prompt: %+v", withPrompt.got)
	}
	got, err := compaction.Compact(context.Background(), compaction.Input{View: span}, opts, compaction.Offline{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Rewrite.Insert[0].Text != want.Rewrite.Insert[0].Text {
		t.Fatalf("checkpoint %q, with the prompt %q", got.Rewrite.Insert[0].Text, want.Rewrite.Insert[0].Text)
	}
}

// TestOffline_CodeIsNotAFile: words of code in a command (f.write, self.encoding) are not relevant files; a
// path with a folder or a known extension is.
func TestOffline_CodeIsNotAFile(t *testing.T) {
	run := asst("running it", "c1")
	run.ToolCalls[0].Name, run.ToolCalls[0].Arguments = "run_command", `{"command":"python -c 'f.write(x); self.encoding; open(\"setup.py\")' && cat docs/notes.md"}`
	span := []transcript.Message{user("fix it"), run, result("c1", "ok"), asst("done")}
	reply, err := compaction.Offline{}.Summarize(context.Background(), compaction.SummaryRequest{Span: span})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"f.write", "self.encoding"} {
		if strings.Contains(reply.Text, `"path":"`+bad+`"`) {
			t.Errorf("%s is listed as a relevant file: %s", bad, reply.Text)
		}
	}
	for _, good := range []string{"setup.py", "docs/notes.md"} {
		if !strings.Contains(reply.Text, `"path":"`+good+`"`) {
			t.Errorf("%s is not listed: %s", good, reply.Text)
		}
	}
}
