package formats

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// turnsReader writes, into a pipe, {"messages":[…]} with turns of a user message, an assistant call and its
// result of resultBytes, with the record of turn bad (if any) given an unknown role.
func turnsReader(turns, resultBytes, bad int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		result := strings.Repeat("x", resultBytes)
		_, err := io.WriteString(pw, `{"system":"sys","messages":[`)
		for i := 0; i < turns && err == nil; i++ {
			role := "user"
			if i == bad {
				role = "robot"
			}
			sep := ","
			if i == turns-1 {
				sep = ""
			}
			_, err = fmt.Fprintf(pw, `{"role":%q,"content":"turn %d"},`+
				`{"role":"assistant","content":"ok","tool_calls":[{"id":"c%d","type":"function","function":{"name":"ls","arguments":"{}"}}]},`+
				`{"role":"tool","tool_call_id":"c%d","content":"%s"}%s`+"\n", role, i, i, i, result, sep)
		}
		if err == nil {
			_, err = io.WriteString(pw, "]}\n")
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// TestImportStream_BoundedMemory: a 60 MB transcript imports with the live heap growing by a few MB, not by
// the transcript's size, and the messages come out valid and in order.
func TestImportStream_BoundedMemory(t *testing.T) {
	const turns, result = 15000, 4000 // ≈ 60 MB
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base, peak := live(), uint64(0)
	n, open := 0, map[string]bool{}
	var last []transcript.Message // the last few, for the structure check
	im, err := ImportStream(turnsReader(turns, result, -1), Auto, func(m transcript.Message) error {
		if n%3000 == 0 {
			peak = max(peak, live())
		}
		n++
		if last = append(last, m); len(last) > 30 {
			last = last[1:]
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		if m.Role == transcript.RoleTool && !open[m.ToolCallID] {
			t.Fatalf("message %d answers %q, which is not open", n-1, m.ToolCallID)
		}
		delete(open, m.ToolCallID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 3*turns || im.Format != OpenAI || len(im.Instructions) != 1 || len(open) != 0 {
		t.Fatalf("%d messages, format %s, %d instructions, %d open calls", n, im.Format, len(im.Instructions), len(open))
	}
	if err := transcripttest.CheckStructure(last[len(last)%3:]); err != nil {
		t.Fatal(err)
	}
	growth := int64(peak) - int64(base)
	t.Logf("live heap growth %.1f MB for a %d MB stream", float64(growth)/(1<<20), turns*result>>20)
	if growth > 16<<20 {
		t.Fatalf("the live heap grew by %d MB importing a %d MB stream", growth>>20, turns*result>>20)
	}
}

// TestImportStream_BadRecordHalfway: a refused record in the middle of a stream stops the import with its
// location, after the messages before it were passed on (the caller drops them).
func TestImportStream_BadRecordHalfway(t *testing.T) {
	n := 0
	_, err := ImportStream(turnsReader(2000, 100, 1000), Auto, func(transcript.Message) error { n++; return nil })
	var fe *Error
	if !errors.As(err, &fe) || fe.Where != "message 3001" || !strings.Contains(fe.What, `unknown role "robot"`) {
		t.Fatalf("error %v; want message 3001: unknown role", err)
	}
	if n < 2900 || n > 3000 {
		t.Fatalf("%d messages passed on before the error; want those before it", n)
	}
}

// TestImportStream_SyntaxErrorLocated: a JSON syntax error far into a stream is located by line and column
// as a decode of the whole input locates it.
func TestImportStream_SyntaxErrorLocated(t *testing.T) {
	var b strings.Builder
	b.WriteString("{\"messages\": [\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "  {\"role\": \"user\", \"content\": \"message %d\"},\n", i)
	}
	b.WriteString("  {\"role\": \"user\" \"content\": \"x\"}\n]}\n")
	_, err := ImportStream(io.MultiReader(strings.NewReader(b.String())), Auto, func(transcript.Message) error { return nil })
	want := `line 5002, column 20: invalid JSON: invalid character '"' after object key:value pair`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v; want %s", err, want)
	}
}

// TestImport_ErrorsInUsersWords: a refused input is described by what the user wrote and what was expected,
// never by encoding/json's scanner states or the Go types that read it.
func TestImport_ErrorsInUsersWords(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"this is not json at all, just some text", `line 1: expected JSON (an object, an array or JSON Lines), found "this is not json at all, just …"`},
		{"\n\n  5", `line 3: expected JSON (an object, an array or JSON Lines), found "5"`},
		{`[{"role":"user","content":"hi"}, 5]`, `message 2: not a message: expected an object, found a number`},
		{`{"messages":"x"}`, `messages: expected an array of messages, found a string`},
		{`[{"role":5,"content":"x"}]`, `message 1: not a message: "role" must be a string, not a number`},
		{`[{"role":"assistant","tool_calls":[{"id":"a","function":{"name":7}}]}]`, `message 1: not an OpenAI chat message: "tool_calls.function.name" must be a string, not a number`},
		{`[{"role":"user","content":[{"type":"text","text":"x"}]},{"role":"assistant","content":[5]}]`, `message 2: content block is not an object`},
		{`[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},5]}]`, `message 1: content[1] is not a block: expected an object, found a number`},
	} {
		_, err := Import([]byte(tc.in), Auto)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Import(%q) = %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

// endless is a reader that yields prefix and then the byte fill up to three times MaxRecordBytes (an end
// that lets a reader without a limit fail rather than run out of memory), counting what it gave.
type endless struct {
	prefix string
	fill   byte
	read   int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= 3*MaxRecordBytes {
		return 0, io.EOF
	}
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestImportStream_RefusesAnOversizedRecordEarly: a message larger than MaxRecordBytes is refused once that
// much of it has been read — in a document and in JSON Lines — rather than held whole first (an endless
// message would otherwise be read until memory runs out).
func TestImportStream_RefusesAnOversizedRecordEarly(t *testing.T) {
	for name, prefix := range map[string]string{
		"document":   `{"messages":[{"role":"user","content":"hi"},` + "\n" + `{"role":"assistant","content":"`,
		"json lines": `{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"`,
		"third line": `{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":"ok"}` + "\n" + `{"role":"user","content":"`,
	} {
		t.Run(name, func(t *testing.T) {
			in := &endless{prefix: prefix, fill: 'a'}
			emitted := 0
			_, err := ImportStream(in, Auto, func(transcript.Message) error { emitted++; return nil })
			var ie *Error
			if !errors.As(err, &ie) || !strings.Contains(ie.What, "larger than a session can store") {
				t.Fatalf("error = %v, want the record refused for its size", err)
			}
			if !strings.HasPrefix(ie.Where, "line ") {
				t.Errorf("where = %q, want the line of the record", ie.Where)
			}
			if limit := int64(MaxRecordBytes + 4<<20); in.read > limit {
				t.Errorf("read %d MB before refusing, want at most %d MB", in.read>>20, limit>>20)
			}
		})
	}
}
