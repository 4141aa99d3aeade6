package compaction

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const fullReply = `{"goal":"Fix the unicode crash in sqlfluff fix","instructions":["Do not change the public API","Keep tests green"],` +
	`"discoveries":["linted_file.py writes with the default encoding"],"accomplished":["Reproduced the crash with test_unicode_issue.py"],` +
	`"currentState":"Patch drafted in src/sqlfluff/core/linter/linted_file.py","nextSteps":["Run the test suite","Write a regression test"],` +
	`"relevantFiles":[{"path":"src/sqlfluff/core/linter/linted_file.py","reason":"writes the fixed file"}]}`

func TestParsePartial_EveryPrefix(t *testing.T) {
	var want map[string]json.RawMessage
	if err := json.Unmarshal([]byte(fullReply), &want); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= len(fullReply); n++ {
		po := ParsePartial(fullReply[:n])
		for k, v := range po.Fields {
			if string(want[k]) != string(v) {
				t.Fatalf("prefix %d: field %s = %s; want %s", n, k, v, want[k])
			}
		}
		if po.CutValue != nil && !json.Valid(po.CutValue) {
			t.Fatalf("prefix %d: salvaged value is not JSON: %s", n, po.CutValue)
		}
		if po.Complete != (n == len(fullReply)) {
			t.Fatalf("prefix %d: complete=%v", n, po.Complete)
		}
	}
	if po := ParsePartial("Sure! Here it is:\n```json\n" + fullReply + "\n```"); len(po.Fields) != 7 || !po.Complete {
		t.Fatalf("fenced reply: %d fields", len(po.Fields))
	}
}

func TestParseReply(t *testing.T) {
	cut := fullReply[:strings.Index(fullReply, `"currentState"`)+40]
	for _, tc := range []struct {
		name      string
		text      string
		truncated bool
		partial   bool
		missing   []string
		textOnly  bool
		err       bool
	}{
		{"complete", fullReply, false, false, nil, false, false},
		{"cut in currentState keeps complete fields and the started text", cut, true, true, []string{"currentState", "nextSteps", "relevantFiles"}, false, false},
		{"plain text", "The user wants X. Done: Y.", false, false, nil, true, false},
		{"plain text cut", "The user wants X. Done:", true, true, nil, true, false},
		{"cut before anything usable", `{"go`, true, false, nil, false, true},
		{"empty", "  ", false, false, nil, false, true},
		{"wrong types are dropped, not fatal", `{"goal":"g","instructions":"not a list","discoveries":[],"accomplished":[],"currentState":"s","nextSteps":[],"relevantFiles":[]}`, false, true, []string{"instructions"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cp, err := parseReply(tc.text, tc.truncated)
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			if cp.Partial != tc.partial || !reflect.DeepEqual(cp.Missing, tc.missing) || (cp.Text != "") != tc.textOnly {
				t.Fatalf("partial=%v missing=%v text=%q", cp.Partial, cp.Missing, cp.Text)
			}
			if tc.name == "cut in currentState keeps complete fields and the started text" {
				if cp.Goal == "" || len(cp.Instructions) != 2 || !strings.HasPrefix(cp.CurrentState, "Patch") {
					t.Fatalf("salvage lost fields: %+v", cp)
				}
			}
			if r := cp.Render(); r == "" || (cp.Partial && !strings.Contains(r, "partial")) {
				t.Fatalf("render: %q", r)
			}
		})
	}
}

// TestParsePartial_DropsTheInterruptedArrayItem: a cut inside an array keeps its complete items only.
func TestParsePartial_DropsTheInterruptedArrayItem(t *testing.T) {
	for text, want := range map[string]string{
		`{"discoveries":["d1","d2 is trunc`:      `["d1"]`,
		`{"discoveries":["d1","d2"`:              `["d1","d2"]`,
		`{"discoveries":["d1",`:                  `["d1"]`,
		`{"discoveries":["only one is trunc`:     ``,
		`{"relevantFiles":[{"path":"a.go"},{"pa`: `[{"path":"a.go"}]`,
	} {
		po := ParsePartial(text)
		if string(po.CutValue) != want {
			t.Errorf("%s: salvaged %s; want %s", text, po.CutValue, want)
		}
	}
}

func FuzzParsePartial(f *testing.F) {
	f.Add(fullReply, 100)
	f.Add(`{"a":[1,2,{"b":"c\u00e9\"`, 20)
	f.Add(`{"goal":"x\\`, 10)
	f.Fuzz(func(t *testing.T, text string, cut int) {
		if cut < 0 {
			cut = -cut
		}
		if len(text) > 0 {
			cut %= len(text) + 1
		} else {
			cut = 0
		}
		po := ParsePartial(text[:cut])
		for k, v := range po.Fields {
			if !json.Valid(v) {
				t.Fatalf("field %s not valid JSON: %q", k, v)
			}
		}
		if po.CutValue != nil && !json.Valid(po.CutValue) {
			t.Fatalf("salvage not valid JSON: %q", po.CutValue)
		}
		// On a valid object, complete fields equal the decoder's, for every prefix.
		var whole map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &whole) == nil && strings.HasPrefix(strings.TrimSpace(text), "{") {
			for k, v := range po.Fields {
				var a, b any
				_ = json.Unmarshal(v, &a)
				_ = json.Unmarshal(whole[k], &b)
				if !reflect.DeepEqual(a, b) && !hasDuplicateKey(text, k) {
					t.Fatalf("field %s = %s; decoder says %s", k, v, whole[k])
				}
			}
		}
		_, _ = parseReply(text[:cut], cut < len(text))
	})
}

func hasDuplicateKey(text, k string) bool { return strings.Count(text, `"`+k+`"`) > 1 }
