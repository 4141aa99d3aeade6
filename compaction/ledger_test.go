package compaction_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"
)

// called is an assistant message with one call of tool name with args.
func called(id, name, args string) transcript.Message {
	m := asst("")
	m.ToolCalls = []transcript.ToolCall{{ID: id, Name: name, Arguments: args}}
	return m
}

func failedResult(id, text string) transcript.Message {
	m := result(id, text)
	m.IsError = true
	return m
}

// ledgerSpan uses every kind of anchor, in the built-in tools' words and in Claude Code's and Codex's.
func ledgerSpan() []transcript.Message {
	return []transcript.Message{
		user("Fix the parser. Never edit files under vendor/. Nunca cambies la API pública.\nThanks!"),
		called("c1", "read_file", `{"path":"parser/lex.go"}`), result("c1", "package parser"),
		called("c2", "edit_file", `{"path":"parser/lex.go","oldText":"a","newText":"b"}`), result("c2", "edited"),
		called("c3", "Write", `{"file_path":"docs/notes.md","content":"x"}`), result("c3", "ok"),
		called("c4", "list_dir", `{"path":"parser"}`), result("c4", "lex.go"),
		called("c5", "run_command", `{"command":"go test ./parser"}`),
		failedResult("c5", "exit code 1\n--- FAIL: TestLex (0.01s)\n    lex_test.go:12: unexpected token\nFAIL\nok other"),
		called("c6", "shell", `{"command":["bash","-lc","go vet ./..."]}`), result("c6", "exit code 0\n"),
		called("c7", "apply_patch", `{"input":"*** Begin Patch\n*** Update File: parser/ast.go\n@@\n-x\n+y\n*** End Patch"}`), result("c7", "Done"),
		called("c8", "read_file", `{"path":"missing.go"}`), failedResult("c8", "error: no such file"),
		asst("Done: the lexer accepts the token now."),
	}
}

func TestLedger_ExtractsEveryKind(t *testing.T) {
	l := compaction.Extract(ledgerSpan())
	var files []string
	for _, f := range l.Files {
		files = append(files, f.Path+":"+f.Use)
	}
	if got := strings.Join(files, ","); got != "parser/lex.go:edited,docs/notes.md:written,parser/ast.go:edited" {
		t.Errorf("files %s (a listed folder and a read that failed are not files the session used)", got)
	}
	if got := strings.Join(l.Constraints, "|"); got != "Never edit files under vendor/|Nunca cambies la API pública." {
		t.Errorf("constraints %q", got)
	}
	if len(l.Commands) != 2 || l.Commands[0] != (compaction.CommandRun{Command: "go test ./parser", Status: "exit 1"}) ||
		l.Commands[1] != (compaction.CommandRun{Command: "go vet ./...", Status: "exit 0"}) {
		t.Errorf("commands %+v", l.Commands)
	}
	if got := strings.Join(l.Errors, "|"); got != "--- FAIL: TestLex (0.01s)|FAIL|error: no such file" {
		t.Errorf("error lines %q", got)
	}
}

func TestLedger_PreviousCheckpointIsAnAnchor(t *testing.T) {
	prev := compaction.Checkpoint{Instructions: []string{"Use tabs."}, RelevantFiles: []compaction.RelevantFile{{Path: "old.go", Reason: "read"}}}
	span := append([]transcript.Message{checkpointOf(t, prev)}, user("go on"), asst("ok"))
	l := compaction.Extract(span)
	if len(l.Constraints) != 1 || l.Constraints[0] != "Use tabs." || len(l.Files) != 1 || l.Files[0].Path != "old.go" {
		t.Fatalf("%+v", l)
	}
}

func TestLedger_MeasureAndMerge(t *testing.T) {
	l := compaction.Extract(ledgerSpan())
	l.Extra = map[string][]string{"tickets": {"JIRA-12"}}
	cp := compaction.Checkpoint{Goal: "Fix the parser", Instructions: []string{"never edit files under vendor/"},
		Accomplished:  []string{"ran go test ./parser: it failed with --- FAIL: TestLex (0.01s)"},
		RelevantFiles: []compaction.RelevantFile{{Path: "/ws/parser/lex.go", Reason: "the lexer"}}}
	f := l.Measure(&cp)
	want := compaction.Fidelity{
		compaction.KindFiles:       {Anchors: 3, Covered: 1},
		compaction.KindConstraints: {Anchors: 2, Covered: 1},
		compaction.KindCommands:    {Anchors: 2, Covered: 1},
		compaction.KindErrors:      {Anchors: 3, Covered: 2}, // "FAIL" is in the quoted "--- FAIL: TestLex"
		"tickets":                  {Anchors: 1},
	}
	if fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("coverage %v, want %v", f, want)
	}
	l.Merge(&cp, f)
	if f[compaction.KindFiles].Added != 2 || f[compaction.KindConstraints].Added != 1 || f["tickets"].Added != 1 {
		t.Fatalf("added %v", f)
	}
	after := l.Measure(&cp)
	for _, kind := range []string{compaction.KindFiles, compaction.KindConstraints, "tickets"} {
		if c := after[kind]; c.Covered != c.Anchors {
			t.Errorf("%s after the merge: %d of %d", kind, c.Covered, c.Anchors)
		}
	}
	if !strings.Contains(cp.Render(), "Nunca cambies la API pública.") {
		t.Fatal("the constraint is not quoted verbatim")
	}
}

// emptyCheckpoint is a summarizer whose every checkpoint is empty: the worst a model can do.
type emptyCheckpoint struct{}

func (emptyCheckpoint) Summarize(context.Context, compaction.SummaryRequest) (compaction.SummaryReply, error) {
	return compaction.SummaryReply{Text: `{"goal":"","instructions":[],"discoveries":[],"accomplished":[],"currentState":"","nextSteps":[],"relevantFiles":[]}`}, nil
}

// TestCompact_NothingTheUserSaidIsLost is the measurement: a session compacted again and again by a
// summarizer that keeps nothing still carries the user's first instruction, the files it edited and the
// user's words, and each compaction reports what the summarizer had covered.
func TestCompact_NothingTheUserSaidIsLost(t *testing.T) {
	view := []transcript.Message{}
	compactions := 0
	for turn := 0; turn < 26; turn++ {
		text := fmt.Sprintf("Turn %d: carry on with step %d.", turn, turn)
		if turn == 0 {
			text = "Never edit files under vendor/. Port the lexer to the new token set."
		}
		id := fmt.Sprint("c", turn)
		view = append(view, user(text), called(id, "edit_file", fmt.Sprintf(`{"path":"pkg/f%d.go","oldText":"a","newText":"b"}`, turn)),
			result(id, strings.Repeat("edited line\n", 200)), asst(fmt.Sprintf("Step %d done.", turn)))
		if turn%4 != 3 {
			continue
		}
		res, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, UserWordsChars: 3200}, emptyCheckpoint{})
		if err != nil {
			t.Fatalf("turn %d: %v", turn, err)
		}
		compactions++
		view = res.View
		ev := rec.events[len(rec.events)-1]
		if c := ev.Fidelity[compaction.KindFiles]; c.Anchors == 0 || c.Covered != 0 || c.Added != c.Anchors {
			t.Fatalf("files coverage %+v: the empty checkpoint covered none, the merge added all", c)
		}
	}
	ck := view[0].Text
	for _, want := range []string{"Never edit files under vendor/.", "pkg/f0.go", "pkg/f20.go", "> Turn 20: carry on with step 20.", "The user's own words"} {
		if !strings.Contains(ck, want) {
			t.Errorf("after %d compactions the checkpoint lost %q:\n%s", compactions, want, ck)
		}
	}
	var cp compaction.Checkpoint
	cp, _ = compaction.ParseStructured(view[0].Structured)
	if len(cp.UserWords) == 0 || !strings.HasPrefix(cp.UserWords[0], "Turn 2") || cp.Fidelity == nil {
		t.Fatalf("user words %q (newest first), fidelity %v", cp.UserWords, cp.Fidelity)
	}
	if n := wordsChars(cp.UserWords); n > 3200 {
		t.Fatalf("the user's words take %d chars; the budget is 3200", n)
	}
	if len(cp.UserWords) != 23 || cp.UserWords[22] != "Never edit files under vendor/. Port the lexer to the new token set." {
		t.Fatalf("%d of the 23 compacted messages of the user are quoted, the oldest last: %q", len(cp.UserWords), cp.UserWords)
	}
}

func wordsChars(words []string) int {
	n := 0
	for _, w := range words {
		n += utf8.RuneCountInString(w)
	}
	return n
}

// TestCompact_UserWordsWithinTheirBudget: the newest message first, one that does not fit shortened with a
// marker, the rest counted in the text; 0 turns it off; quoting never makes a compaction fail to shrink.
func TestCompact_UserWordsWithinTheirBudget(t *testing.T) {
	long := strings.Repeat("Please keep the public API stable. ", 40)
	view := []transcript.Message{user("first, short"), asst("ok"), user(long), asst("ok"), user("third"), asst("ok")}
	for i := 0; i < 6; i++ {
		id := fmt.Sprint("r", i)
		view = append(view, called(id, "read_file", fmt.Sprintf(`{"path":"f%d.go"}`, i)), result(id, strings.Repeat("x", 3000)), asst("read"))
	}
	view = append(view, user("now"), asst("done"))
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, UserWordsChars: 700}, compaction.Offline{})
	if err != nil {
		t.Fatal(err)
	}
	cp := res.Checkpoint
	if len(cp.UserWords) != 2 || cp.UserWords[0] != "third" || !strings.Contains(cp.UserWords[1], "shortened by compaction: the first") || cp.UserWordsOmitted != 1 {
		t.Fatalf("user words %q, omitted %d", cp.UserWords, cp.UserWordsOmitted)
	}
	if !strings.Contains(res.View[0].Text, "1 older message(s) of the user are not quoted") {
		t.Fatalf("the left-out message is not mentioned:\n%s", res.View[0].Text)
	}
	off, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, compaction.Offline{})
	if err != nil || len(off.Checkpoint.UserWords) != 0 || strings.Contains(off.View[0].Text, "own words") {
		t.Fatalf("budget 0 quotes %q (%v)", off.Checkpoint.UserWords, err)
	}
	// A span of nothing but the user's long messages still compacts: the quotes take at most half of the gain.
	var talk []transcript.Message
	for i := 0; i < 8; i++ {
		talk = append(talk, user(long), asst("ok"))
	}
	if _, _, err := compactChecked(t, compaction.Input{View: talk}, compaction.Options{KeepTurns: 1, UserWordsChars: 1 << 20}, compaction.Offline{}); err != nil {
		t.Fatalf("quoting the user's words stopped the compaction: %v", err)
	}
}

// TestCompact_LedgerPropertyOnGeneratedSessions: whatever the session, after a compaction every constraint
// sentence of the span is in the instructions and every file its tool calls used is in the relevant files.
func TestCompact_LedgerPropertyOnGeneratedSessions(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		cfg := synthetic.Default(30 + int(seed)*7)
		cfg.Seed = seed
		view := synthetic.Generate(cfg)
		for _, s := range []compaction.Summarizer{compaction.Offline{}, emptyCheckpoint{}} {
			res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, s)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			l := compaction.Extract(view[:res.Rewrite.Drop])
			after := l.Measure(&res.Checkpoint)
			for _, kind := range []string{compaction.KindFiles, compaction.KindConstraints} {
				if c := after[kind]; c.Covered != c.Anchors {
					t.Errorf("seed %d, %T: %s %d of %d after the merge", seed, s, kind, c.Covered, c.Anchors)
				}
			}
		}
	}
}

// checkpointOf is a checkpoint message holding cp.
func checkpointOf(t *testing.T, cp compaction.Checkpoint) transcript.Message {
	t.Helper()
	raw, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	return transcript.Message{ID: nextID(), Role: transcript.RoleUser, Summary: true, Text: cp.Render(), Structured: raw}
}

func FuzzExtract(f *testing.F) {
	f.Add("Never touch vendor/. No uses goto.", "edit_file", `{"path":"a.go"}`, "exit code 2\nerror: boom", true)
	f.Add("", "shell", `{"command":["bash","-lc","ls"]}`, "", false)
	f.Add("siempre", "apply_patch", `{"input":"*** Add File: x\n"}`, "fail", true)
	f.Fuzz(func(t *testing.T, said, tool, args, out string, isErr bool) {
		span := []transcript.Message{user(said), called("c", tool, args), result("c", out)}
		span[2].IsError = isErr
		l := compaction.Extract(span)
		for _, s := range l.Constraints {
			if !strings.Contains(said, strings.TrimSuffix(s, "…")) || !compaction.IsConstraint(s) {
				t.Fatalf("constraint %q is not a constraint sentence of %q", s, said)
			}
		}
		for _, u := range l.Files {
			if strings.TrimSpace(u.Path) == "" || !strings.Contains(args, strings.TrimSpace(u.Path)) && !strings.Contains(args, `\`) {
				t.Fatalf("file %q is not in the arguments %q", u.Path, args)
			}
		}
		cp := compaction.Checkpoint{}
		fid := l.Measure(&cp)
		l.Merge(&cp, fid)
		after := l.Measure(&cp)
		for _, kind := range []string{compaction.KindFiles, compaction.KindConstraints} {
			if c := after[kind]; c.Covered != c.Anchors {
				t.Fatalf("%s: %d of %d after the merge", kind, c.Covered, c.Anchors)
			}
		}
	})
}
