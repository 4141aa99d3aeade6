package formats

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// rawCallIDs extracts every tool call ID of a file exactly as written, whatever its format.
func rawCallIDs(data []byte) map[string]bool {
	ids := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if tc, ok := x["tool_calls"].([]any); ok {
				for _, c := range tc {
					ids[c.(map[string]any)["id"].(string)] = true
				}
			}
			if x["type"] == "tool_use" {
				ids[x["id"].(string)] = true
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var v any
		if json.Unmarshal(line, &v) == nil {
			walk(v)
		}
	}
	var v any
	if json.Unmarshal(data, &v) == nil {
		walk(v)
	}
	return ids
}

func TestImport_RealTranscripts(t *testing.T) {
	for _, tc := range transcripttest.Corpus(t) {
		t.Run(tc.Name, func(t *testing.T) {
			data := tc.Read(t)
			im, err := Import(data, Auto)
			if err != nil {
				t.Fatal(err)
			}
			if im.Format != Format(tc.Format) {
				t.Fatalf("detected %s; want %s", im.Format, tc.Format)
			}
			if tc.Messages > 0 && len(im.Messages) != tc.Messages {
				t.Errorf("got %d messages; want %d", len(im.Messages), tc.Messages)
			}
			if len(im.Instructions) != tc.Instructions {
				t.Errorf("got %d instructions; want %d", len(im.Instructions), tc.Instructions)
			}
			if err := transcripttest.CheckStructure(im.Messages); err != nil {
				t.Fatal(err)
			}
			// Every call ID of the file survives byte-exact.
			want := rawCallIDs(data)
			got := map[string]bool{}
			calls := 0
			for _, m := range im.Messages {
				for _, c := range m.ToolCalls {
					got[c.ID] = true
					calls++
				}
			}
			if tc.Format == string(Anthropic) {
				// Sub-agent records are skipped on purpose; their IDs are not in the main conversation.
				for id := range got {
					if !want[id] {
						t.Errorf("call ID %q is not in the file", id)
					}
				}
			} else if !reflect.DeepEqual(got, want) {
				t.Errorf("call IDs differ: got %d, file has %d", len(got), len(want))
			}
			if calls != tc.Calls {
				t.Errorf("got %d calls; want %d", calls, tc.Calls)
			}
			if p := transcript.UnansweredCalls(im.Messages); len(p) != tc.Pending {
				t.Errorf("got %d uncertain calls; want %d", len(p), tc.Pending)
			}
			roundTrip(t, im)
		})
	}
}

// roundTrip exports im in both formats and imports it again: the transcript must not change.
func roundTrip(t *testing.T, im Imported) {
	t.Helper()
	for _, f := range []Format{OpenAI, Anthropic} {
		var buf bytes.Buffer
		if err := Export(&buf, im.Instructions, im.Messages, f, false); err != nil {
			t.Fatal(err)
		}
		back, err := Import(buf.Bytes(), f)
		if err != nil {
			t.Fatalf("re-importing the %s export: %v", f, err)
		}
		if !reflect.DeepEqual(strings.Join(back.Instructions, "\n\n"), strings.Join(im.Instructions, "\n\n")) {
			t.Errorf("%s round trip changed the instructions", f)
		}
		if len(back.Messages) != len(im.Messages) {
			t.Fatalf("%s round trip: %d messages; want %d", f, len(back.Messages), len(im.Messages))
		}
		for i := range back.Messages {
			g, w := back.Messages[i], im.Messages[i]
			if f == OpenAI {
				w.IsError = false // OpenAI tool messages have no error flag
				w.Items = withoutKind(w.Items, transcript.KindAnthropicThinking)
			}
			if f == Anthropic {
				w.ToolName = "" // Anthropic results do not name their tool
				for j := range w.ToolCalls {
					w.ToolCalls[j].Arguments = string(w.ToolCalls[j].InputObject())
					var buf bytes.Buffer
					if json.Compact(&buf, []byte(w.ToolCalls[j].Arguments)) == nil {
						w.ToolCalls[j].Arguments = buf.String()
					}
				}
			}
			w.Measure() // after the edits above
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("%s round trip changed message %d:\n got  %+v\n want %+v", f, i, g, w)
			}
		}
	}
}

// withoutKind returns items without those of kind (what a format cannot carry), nil when none is left.
func withoutKind(items []transcript.ProviderItem, kind string) []transcript.ProviderItem {
	var out []transcript.ProviderItem
	for _, it := range items {
		if it.Kind != kind {
			out = append(out, it)
		}
	}
	return out
}

func TestImport_Generated(t *testing.T) {
	msgs := synthetic.Generate(synthetic.Default(500))
	for i := range msgs {
		msgs[i].ID, msgs[i].CreatedAt = "", msgs[i].CreatedAt.AddDate(-100, 0, 0)
		msgs[i].CreatedAt = msgs[i].CreatedAt.AddDate(100, 0, 0)
		msgs[i].CreatedAt = msgs[i].CreatedAt.Truncate(0)
	}
	var buf bytes.Buffer
	if err := Export(&buf, []string{"sys"}, msgs, OpenAI, false); err != nil {
		t.Fatal(err)
	}
	im, err := Import(buf.Bytes(), Auto)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, im)
}

func TestImport_JSONLines(t *testing.T) {
	openai := `{"role":"user","content":"hi"}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{\"p\": 1}"}}]}
{"role":"tool","tool_call_id":"c1","content":"a.txt"}
`
	im, err := Import([]byte(openai), Auto)
	if err != nil {
		t.Fatal(err)
	}
	if im.Format != OpenAI || len(im.Messages) != 3 || im.Messages[1].ToolCalls[0].Arguments != `{"p": 1}` {
		t.Fatalf("openai jsonl: %+v", im)
	}
	anthropic := `{"role":"user","content":"hi"}
{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig=="},{"type":"text","text":"ok"},{"type":"tool_use","id":"toolu_1","name":"ls","input":{"p":1}}]}
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"}]},{"type":"text","text":"thanks"}]}
`
	im, err = Import([]byte(anthropic), Auto)
	if err != nil {
		t.Fatal(err)
	}
	if im.Format != Anthropic || len(im.Messages) != 4 {
		t.Fatalf("anthropic jsonl: %+v", im)
	}
	a := im.Messages[1]
	if blocks, _ := a.ThinkingBlocks(); a.Reasoning != "hmm" || a.Text != "ok" || a.ToolCalls[0].Arguments != `{"p":1}` || len(blocks) != 1 || blocks[0].Signature != "sig==" {
		t.Fatalf("assistant blocks: %+v", a)
	}
	if im.Messages[2].Role != transcript.RoleTool || im.Messages[2].Text != "a.txt" || im.Messages[3].Text != "thanks" {
		t.Fatalf("tool_result then text: %+v", im.Messages[2:])
	}
	var buf bytes.Buffer
	_ = Export(&buf, nil, im.Messages, Anthropic, false)
	if !strings.Contains(buf.String(), `"signature":"sig=="`) {
		t.Fatalf("thinking signature not replayed: %s", buf.String())
	}
}

// TestImport_SequentialIDReuse: a trajectory that reuses a call ID once its call is answered imports, each
// result paired with the latest open call of its ID, and exports back with the IDs unchanged.
func TestImport_SequentialIDReuse(t *testing.T) {
	in := `{"history":[{"role":"user","content":"go"},
{"role":"assistant","content":"a","tool_calls":[{"id":"call_1","type":"function","function":{"name":"open","arguments":"{}"}}]},
{"role":"tool","content":"first","tool_call_ids":["call_1"]},
{"role":"assistant","content":"b","tool_calls":[{"id":"call_1","type":"function","function":{"name":"edit","arguments":"{}"}}]},
{"role":"tool","content":"second","tool_call_ids":["call_1"]},
{"role":"assistant","content":"c","tool_calls":[{"id":"call_1","type":"function","function":{"name":"submit","arguments":"{}"}}]}]}`
	im, err := Import([]byte(in), Auto)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(im.Messages); err != nil {
		t.Fatal(err)
	}
	open := transcript.UnansweredCalls(im.Messages)
	if len(open) != 1 || open[0].Name != "submit" {
		t.Fatalf("uncertain calls %+v; want the last call_1 (submit)", open)
	}
	roundTrip(t, im)
}

func TestImport_Refusals(t *testing.T) {
	for _, tc := range []struct{ name, in, where, what string }{
		{"empty", "  ", "input", "empty"},
		{"bad json document", "{\"messages\": [\n{\"role\": \"user\",,}]}", "line 2, column", "invalid JSON"},
		{"bad json line", "{\"role\":\"user\",\"content\":\"a\"}\n{oops}\n", "line 2", "invalid JSON"},
		{"unknown role", `[{"role":"user","content":"a"},{"role":"robot","content":"b"}]`, "message 2", `unknown role "robot"`},
		{"orphan result", `{"messages":[{"role":"user","content":"a"},{"role":"tool","tool_call_id":"nope","content":"x"}]}`, "message 2", `call ID "nope"`},
		{"double result", `[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"1"},{"role":"tool","tool_call_id":"c","content":"2"}]`, "message 3", "second result"},
		{"duplicate call id", `[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c","type":"function","function":{"name":"g","arguments":"{}"}}]}]`, "message 1", "used twice"},
		{"reused id while open", `[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"g","arguments":"{}"}}]}]`, "message 2", "first call has no result"},
		{"several ids in tool_call_ids", `{"history":[{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","content":"x","tool_call_ids":["c","d"]}]}`, "message 2", "answers 2 calls"},
		{"anthropic orphan", `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_x","content":"r"}]}` + "\n", "line 1", `"toolu_x"`},
		{"not an object line", "[1]\n[2]\n", "", ""},
		{"object without messages", `{"foo":1}`, "input", `without "messages"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			im, err := Import([]byte(tc.in), Auto)
			if err == nil {
				t.Fatalf("accepted: %+v", im)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a formats.Error", err)
			}
			if !strings.Contains(fe.Where, tc.where) || !strings.Contains(fe.What, tc.what) {
				t.Fatalf("error %q; want where %q, what %q", err, tc.where, tc.what)
			}
		})
	}
}

func TestExport_AuditFields(t *testing.T) {
	msgs := []transcript.Message{
		{ID: "a", Role: transcript.RoleUser, Summary: true, Partial: true, Text: "ckpt"},
		{ID: "b", Role: transcript.RoleUser, Compacted: true, Text: "old"},
		{ID: "c", Role: transcript.RoleTool, ToolCallID: "x", Truncated: true, OriginalID: "b", Text: "cut"},
	}
	for _, f := range []Format{OpenAI, Anthropic} {
		var buf bytes.Buffer
		if err := Export(&buf, nil, msgs, f, true); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Messages []struct{ Alisio alisioMeta }
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		a := doc.Messages
		if len(a) != 3 || !a[0].Alisio.Summary || !a[0].Alisio.Partial || !a[1].Alisio.Compacted || !a[2].Alisio.Truncated || a[2].Alisio.OriginalID != "b" {
			t.Fatalf("%s audit fields: %s", f, buf.String())
		}
	}
}

// FuzzImport feeds arbitrary bytes to the importer: it never panics, and whatever it accepts is a valid
// transcript that survives an export/import round trip.
func FuzzImport(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]`))
	f.Add([]byte("{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"r\"}]}\n"))
	f.Add([]byte(`{"system":"s","messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t1","name":"n","input":{"a":1}}]}]}`))
	f.Add([]byte(`{"type":"assistant","message":{"id":"m","role":"assistant","content":[{"type":"text","text":"a"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		im, err := Import(data, Auto)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || fe.Where == "" || fe.What == "" {
				t.Fatalf("an unlocated error: %v", err)
			}
			return
		}
		if err := transcripttest.CheckStructure(im.Messages); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Export(&buf, im.Instructions, im.Messages, OpenAI, false); err != nil {
			t.Fatal(err)
		}
		back, err := Import(buf.Bytes(), OpenAI)
		if err != nil {
			t.Fatalf("the export of an accepted transcript does not import: %v", err)
		}
		if len(back.Messages) != len(im.Messages) {
			t.Fatalf("round trip: %d messages; want %d", len(back.Messages), len(im.Messages))
		}
	})
}
