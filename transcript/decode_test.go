package transcript

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// fullMessage sets every field of Message, so that a field added to Message without the decoder knowing it
// fails TestUnmarshalMessage_FastPathReadsEveryField.
func fullMessage() Message {
	return Message{ID: "m1", Role: RoleAssistant, Text: "a <b> & \"c\"\n\té\u2028😀\x00", Reasoning: "why\\",
		ToolCalls:  []ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "c2", Name: "x", Arguments: "not json"}},
		ToolCallID: "c0", ToolName: "run", IsError: true, Declined: true,
		Items:   []ProviderItem{{Kind: "reasoning", Data: json.RawMessage(`{"encrypted":"x","n":[1,2.5e3,true,null]}`)}, {Kind: "s", Data: json.RawMessage(`"str"`)}},
		Summary: true, Structured: json.RawMessage(`{"goal":"g","instructions":["a]"]}`), Partial: true, Compacted: true, Undone: true,
		Truncated: true, OriginalID: "m0", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600)),
		Usage: &Usage{PromptTokens: 12, CompletionTokens: -3}}
}

// fast decodes data on the fast path only.
func fast(data []byte) (Message, bool) {
	var m Message
	d := decoder{data: data}
	return m, d.message(&m)
}

// checkSame fails unless UnmarshalMessage gives what json.Unmarshal gives, value and error.
func checkSame(t interface{ Fatalf(string, ...any) }, data []byte) {
	var want, got Message
	werr := json.Unmarshal(data, &want)
	gerr := UnmarshalMessage(data, &got)
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("%q: error %v, encoding/json says %v", data, gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", data, got, want)
	}
}

func TestUnmarshalMessage_FastPathReadsEveryField(t *testing.T) {
	m := fullMessage()
	v := reflect.ValueOf(m)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && v.Field(i).IsZero() {
			t.Fatalf("fullMessage leaves %s zero: set it, and teach the decoder in decode.go to read it", f.Name)
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := fast(raw); !ok {
		t.Fatalf("the fast path refused %s", raw)
	}
	checkSame(t, raw)
	indented, _ := json.MarshalIndent(m, " ", "\t")
	if _, ok := fast(indented); !ok {
		t.Fatalf("the fast path refused %s", indented)
	}
	checkSame(t, indented)
}

// Every message json.Marshal writes takes the fast path and decodes to what encoding/json decodes.
func TestUnmarshalMessage_RoundTrip(t *testing.T) {
	text := rapid.OneOf(rapid.String(), rapid.StringMatching(`[a-z<>&"\\\n\t/ ]*`),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }))
	rapid.Check(t, func(t *rapid.T) {
		m := Message{ID: text.Draw(t, "id"), Role: Role(text.Draw(t, "role")), Text: text.Draw(t, "text"),
			Reasoning: text.Draw(t, "reasoning"), ToolCallID: text.Draw(t, "callID"), ToolName: text.Draw(t, "tool"),
			IsError: rapid.Bool().Draw(t, "isError"), Declined: rapid.Bool().Draw(t, "declined"), Summary: rapid.Bool().Draw(t, "summary"),
			Partial: rapid.Bool().Draw(t, "partial"), Compacted: rapid.Bool().Draw(t, "compacted"), Undone: rapid.Bool().Draw(t, "undone"),
			Truncated: rapid.Bool().Draw(t, "truncated"), OriginalID: text.Draw(t, "orig"),
			CreatedAt: time.Unix(rapid.Int64Range(-1e10, 1e11).Draw(t, "sec"), rapid.Int64Range(0, 1e9-1).Draw(t, "ns")).
				In(time.FixedZone("", 60*rapid.IntRange(-720, 720).Draw(t, "zone")))}
		for range rapid.IntRange(0, 3).Draw(t, "calls") {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: text.Draw(t, "cid"), Name: text.Draw(t, "cname"), Arguments: text.Draw(t, "args")})
		}
		for range rapid.IntRange(0, 2).Draw(t, "items") {
			data, _ := json.Marshal(map[string]any{"t": text.Draw(t, "data"), "n": rapid.Float64().Draw(t, "num")})
			m.Items = append(m.Items, ProviderItem{Kind: text.Draw(t, "kind"), Data: data})
		}
		if rapid.Bool().Draw(t, "structured") {
			m.Structured, _ = json.Marshal([]string{text.Draw(t, "s")})
		}
		if rapid.Bool().Draw(t, "usage") {
			m.Usage = &Usage{PromptTokens: rapid.Int().Draw(t, "pt"), CompletionTokens: rapid.IntRange(-5, 1e9).Draw(t, "ct")}
		}
		raw, err := json.Marshal(m)
		if err != nil {
			t.Skip("not encodable:", err)
		}
		if _, ok := fast(raw); !ok {
			t.Fatalf("the fast path refused %s", raw)
		}
		checkSame(t, raw)
	})
}

// Inputs outside the fast path's form decode as encoding/json decodes them, errors included.
func TestUnmarshalMessage_OtherForms(t *testing.T) {
	for _, in := range []string{
		``, `null`, `{}`, `[]`, `{"id":"a"} x`, `{"ID":"case"}`, `{"id":"a","id":"b"}`, `{"unknown":[1,{"x":null}],"id":"a"}`,
		`{"text":null}`, `{"text":5}`, `{"text":"\ud83d\ude00 pair"}`, `{"text":"\ud800 lone"}`, "{\"text\":\"bad \xff utf8\"}",
		"{\"text\":\"ctl \x01\"}", `{"text":"bad \x escape"}`, `{"i\u0064":"escaped key"}`, `{"isError":1}`, `{"isError":truex}`,
		`{"usage":{"promptTokens":1.5}}`, `{"usage":{"promptTokens":01}}`, `{"usage":{"promptTokens":99999999999999999999}}`,
		`{"usage":null}`, `{"usage":{"promptTokens":-0,"completionTokens":7}}`, `{"toolCalls":[]}`, `{"toolCalls":null}`,
		`{"toolCalls":[{"id":"a","extra":1}]}`, `{"items":[{"kind":"k","data":null}]}`, `{"items":[{"kind":"k"}]}`,
		`{"structured":[1,2}`, `{"structured":{"a":"}"}}`, `{"structured": 12 }`, `{"structured":tru}`,
		`{"createdAt":"2026-01-02T03:04:05Z"}`, `{"createdAt":"yesterday"}`, `{"createdAt":5}`, `{"id":"a",}`,
		` { "id" : "a" , "role" : "user" } `, `{"id":"unterminated`, `{"role":"assistant","toolCalls":[{"id":"c"}]`,
	} {
		checkSame(t, []byte(in))
	}
}

func FuzzUnmarshalMessage(f *testing.F) {
	full, _ := json.Marshal(fullMessage())
	f.Add(full)
	f.Add([]byte(`{"id":"a","role":"tool","text":"x\ny","toolCallId":"c","createdAt":"2026-01-02T03:04:05.123Z"}`))
	f.Add([]byte(`{"usage":{"promptTokens":1,"completionTokens":2},"items":[{"kind":"k","data":[{}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { checkSame(t, data) })
}

// BenchmarkUnmarshalMessage compares the decoder with encoding/json on a stored tool result.
func BenchmarkUnmarshalMessage(b *testing.B) {
	m := Message{ID: NewID(), Role: RoleTool, ToolCallID: "call_1", ToolName: "run_command",
		Text: strings.Repeat("ok  \tgithub.com/x/y\t0.01s\n", 40), CreatedAt: time.Now()}
	raw, _ := json.Marshal(m)
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			var out Message
			if err := UnmarshalMessage(raw, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var out Message
			if err := json.Unmarshal(raw, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
