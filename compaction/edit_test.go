package compaction_test

import (
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
)

func TestEditCheckpoint(t *testing.T) {
	current := compaction.Checkpoint{Goal: "old", UserWords: []string{"never push"}, Replaced: 12, Context: "## From the memory plugin\n- the lexer is hand-written",
		Fidelity: compaction.Fidelity{compaction.KindFiles: {Anchors: 1, Covered: 1}}}
	doc := compaction.Editable(current)
	if !strings.HasPrefix(string(doc), "{\n  \"goal\": \"old\",\n  \"instructions\": [],") || strings.Contains(string(doc), "userWords") {
		t.Fatalf("editable document:\n%s", doc)
	}
	edited := strings.Replace(string(doc), `"goal": "old"`, `"goal": "new <goal> & more"`, 1)
	cp, msg, err := compaction.EditCheckpoint([]byte(edited), current, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if bom, _, err := compaction.EditCheckpoint(append([]byte("\xef\xbb\xbf"), edited...), current, 10_000); err != nil || bom.Goal != cp.Goal {
		t.Errorf("a document that begins with a byte-order mark: %v", err)
	}
	if cp.Goal != "new <goal> & more" || len(cp.UserWords) != 1 || cp.Replaced != 12 || cp.Fidelity == nil || !msg.Summary ||
		!strings.Contains(msg.Text, "## Goal\nnew <goal> & more") || !strings.Contains(msg.Text, "> never push") ||
		!strings.HasSuffix(msg.Text, "\n\n## From the memory plugin\n- the lexer is hand-written") {
		t.Fatalf("edited checkpoint %+v\n%s", cp, msg.Text)
	}
	for _, tc := range []struct{ doc, want string }{
		{`{"goal": 1}`, "goal: got number, want string; instructions is missing"},
		{strings.Replace(string(doc), `"goal"`, `"gaol"`, 1), "unknown field(s) gaol"},
		{"{\n  \"goal\": \"x\",\n  oops\n}", "JSON syntax error at line 3, column 3:"},
		{`[]`, "not a JSON object of the checkpoint's fields: it is an array"},
		{"{\n  \"goal\": \"x\",\n", "JSON syntax error at line 3, column 1:"},
		{strings.Replace(string(doc), `"discoveries": []`, `"discoveries": "x", "discoveries": []`, 1), "field(s) discoveries appear more than once"},
		{strings.Replace(string(doc), `"relevantFiles": []`, `"relevantFiles": ["a.go"]`, 1), `relevantFiles/0: got string, want object (each file is {"path": "…", "reason": "…"})`},
		{"  ", "the document is empty"},
		{strings.Replace(string(doc), `"goal": "old"`, `"goal": " "`, 1), "goal is empty"},
		{strings.Replace(string(doc), `"relevantFiles": []`, `"relevantFiles": [{"path": "a.go"}]`, 1), "relevantFiles/0: missing property 'reason'"},
		{strings.Replace(string(doc), `"goal": "old"`, `"goal": "`+strings.Repeat("x", 20_000)+`"`, 1), "more than the 10000 a checkpoint may"},
	} {
		if _, _, err := compaction.EditCheckpoint([]byte(tc.doc), current, 10_000); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q: %v; want it to say %q", tc.doc, err, tc.want)
		}
	}
}

// FuzzEditCheckpoint: whatever the document, an edit is refused with ErrInvalidCheckpoint or accepted; an
// accepted one, made editable again, is accepted unchanged.
func FuzzEditCheckpoint(f *testing.F) {
	f.Add(string(compaction.Editable(compaction.Checkpoint{Goal: "g", Instructions: []string{"never push"}})))
	f.Add(`{"goal":"","instructions":[],"discoveries":[],"accomplished":[],"currentState":"","nextSteps":[],"relevantFiles":[{"path":"a","reason":"b"}]}`)
	f.Add(`{"goal":1}`)
	f.Fuzz(func(t *testing.T, doc string) {
		cp, _, err := compaction.EditCheckpoint([]byte(doc), compaction.Checkpoint{}, 0)
		if err != nil {
			if !strings.Contains(err.Error(), compaction.ErrInvalidCheckpoint.Error()) {
				t.Fatalf("an error that is not a refusal: %v", err)
			}
			return
		}
		again, _, err := compaction.EditCheckpoint(compaction.Editable(cp), compaction.Checkpoint{}, 0)
		if err != nil || again.Render() != cp.Render() {
			t.Fatalf("an accepted edit, made editable again: %v\n%s\n%s", err, cp.Render(), again.Render())
		}
	})
}
