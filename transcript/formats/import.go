// Package formats reads and writes transcripts in the OpenAI Chat Completions and Anthropic Messages shapes
// (a whole document, a bare array, or JSON Lines one message a line; Claude Code session logs too).
package formats

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Format names a wire format.
type Format string

// The formats import and export know. Auto detects the format of each input.
const (
	Auto      Format = "auto"
	OpenAI    Format = "openai"
	Anthropic Format = "anthropic"
)

// ParseFormat checks a format name given by a user.
func ParseFormat(s string, allowAuto bool) (Format, error) {
	switch f := Format(s); f {
	case OpenAI, Anthropic:
		return f, nil
	case Auto:
		if allowAuto {
			return f, nil
		}
	}
	allowed := "openai, anthropic"
	if allowAuto {
		allowed = "auto, " + allowed
	}
	return "", fmt.Errorf("unknown format %q (allowed: %s)", s, allowed)
}

// Imported is a transcript read from a file.
type Imported struct {
	// Format is the format that was read.
	Format Format
	// Instructions are the leading system messages (the system prompt).
	Instructions []string
	Messages     []transcript.Message
	// Skipped says what was deliberately left out (for example a trajectory's exit record).
	Skipped []string
	// Compacted counts the messages an audit export (export --all) marked as compacted: they are imported as
	// ordinary messages, so the importer says so.
	Compacted int
}

// Error is a refused input: Where locates the problem (line or message index), What says what is wrong.
type Error struct {
	Where string
	What  string
}

// Error is "where: what".
func (e *Error) Error() string { return e.Where + ": " + e.What }

// record is one input unit: a message (OpenAI or Anthropic shape) or a Claude Code log record wrapping one.
type record struct {
	where string
	raw   json.RawMessage
}

// Import parses data in format (Auto detects it) and validates the result: known roles, every tool result
// answering an earlier call, call IDs used once. Calls left without a result are kept: they are the uncertain
// calls of SPEC U1. Nothing is returned on error. It is ImportStream collecting the messages.
func Import(data []byte, format Format) (Imported, error) {
	var msgs []transcript.Message
	im, err := ImportStream(bytes.NewReader(data), format, func(m transcript.Message) error {
		msgs = append(msgs, m)
		return nil
	})
	if err != nil {
		return Imported{}, err
	}
	im.Messages = msgs
	return im, nil
}

// ImportStream is Import reading r record by record: it holds one record at a time (and, while Auto has not
// yet seen a record that tells the format, the records before it), and passes each message, measured and in
// order, to emit instead of returning them (Messages of the result is nil). It reports the first error it
// meets in reading order; a caller that stores the messages as they come must drop them on error.
func ImportStream(r io.Reader, format Format, emit func(transcript.Message) error) (Imported, error) {
	in := &errReader{r: r}
	im := &importer{format: format, emit: emit, v: validator{calls: map[string]bool{}, open: map[string]bool{}}}
	err := im.read(in)
	if err == nil {
		err = im.finish()
	}
	if in.err != nil {
		return Imported{}, fmt.Errorf("reading the transcript: %w", in.err)
	}
	if err != nil {
		return Imported{}, err
	}
	im.out.Format = im.format
	if im.system != "" {
		im.out.Instructions = append([]string{im.system}, im.out.Instructions...)
	}
	return im.out, nil
}

// errReader keeps the read error of its reader, so that a failed read is told apart from bad JSON.
type errReader struct {
	r   io.Reader
	err error
}

func (e *errReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

// maxFirstLine bounds what is read ahead to tell JSON Lines from one document: JSON Lines is recognized
// when the first line alone is valid JSON and more follows, so a document on one line longer than this is
// streamed without being held, and a JSON Lines file whose first line is longer is refused as a document.
const maxFirstLine = 16 << 20

// MaxRecordBytes bounds one record of the input (a message, or a line of JSON Lines): a larger one is refused
// as soon as that many bytes of it have been read, before it is held whole. It is the store's limit on one
// message, so nothing import accepts is refused later for its size.
const MaxRecordBytes = 64 << 20

// errRecordTooLarge is the tracker's read error once a record passes MaxRecordBytes.
var errRecordTooLarge = fmt.Errorf("a message larger than %d MB: larger than a session can store; nothing was imported", MaxRecordBytes>>20)

// importer turns records into messages as they are read.
type importer struct {
	format Format
	emit   func(transcript.Message) error
	// pos follows the document being read, to locate a syntax error.
	pos *tracker
	out Imported
	v   validator

	// system is the document's "system" prompt; trajectory says it is a mini-swe-agent trajectory, and
	// trajectoryKnown that no key read later can change that (its "trajectory_format" may follow its messages).
	system                      string
	trajectory, trajectoryKnown bool
	// exitRecord is the first "exit" record seen while trajectoryKnown was false: skipped in a trajectory,
	// refused otherwise.
	exitRecord *record

	// undecided holds the records read while Auto has not seen one that tells the format.
	undecided []record
	// last is the latest message, held back because a later Anthropic record may complete it (Claude Code
	// writes one record per content block); count is the number of messages so far, last included.
	last            *transcript.Message
	count           int
	lastAnthropicID string
}

// read reads the input: JSON Lines when the first line alone is valid JSON and more follows, else one
// document (an object or an array).
func (im *importer) read(in io.Reader) error {
	br := bufio.NewReaderSize(in, 64<<10)
	lead := 0 // lines before the first non-blank character
	for {
		c, _, err := br.ReadRune()
		if err == io.EOF {
			return &Error{"input", "empty file: expected a transcript"}
		}
		if err != nil {
			return nil // a read error: errReader has it
		}
		if !unicode.IsSpace(c) {
			_ = br.UnreadRune()
			break
		}
		if c == '\n' {
			lead++
		}
	}
	if start, _ := br.Peek(1); start[0] != '{' && start[0] != '[' {
		// Every transcript starts with an object or an array: say so rather than what a JSON scanner
		// makes of the first letter.
		peek, _ := br.Peek(40)
		text, _, _ := strings.Cut(strings.ToValidUTF8(string(peek), ""), "\n")
		if utf8.RuneCountInString(text) > 30 {
			text = string([]rune(text)[:30]) + "…"
		}
		return &Error{fmt.Sprintf("line %d", lead+1), fmt.Sprintf("expected JSON (an object, an array or JSON Lines), found %q", text)}
	}
	first, complete, err := readLine(br, maxFirstLine)
	if err != nil {
		return nil
	}
	if complete && json.Valid(bytes.TrimSpace(first)) {
		next, blank, complete, err := nextLine(br)
		if err != nil {
			return nil
		}
		if !complete {
			return &Error{fmt.Sprintf("line %d", lead+blank+2), errRecordTooLarge.Error()}
		}
		if next != nil {
			return im.lines(br, lead, first, blank, next)
		}
		return im.document(bytes.NewReader(first))
	}
	return im.document(io.MultiReader(bytes.NewReader(first), br))
}

// readLine reads one line, newline included, or at most max bytes of it (complete false).
func readLine(br *bufio.Reader, max int) (line []byte, complete bool, err error) {
	for {
		part, err := br.ReadSlice('\n')
		line = append(line, part...)
		switch {
		case err == nil || err == io.EOF:
			return line, true, nil
		case err != bufio.ErrBufferFull:
			return nil, false, err
		case len(line) > max:
			return line, false, nil
		}
	}
}

// nextLine skips blank lines and returns the next one (nil at the end) and how many were skipped; a line
// longer than MaxRecordBytes is returned cut, with complete false.
func nextLine(br *bufio.Reader) (line []byte, blank int, complete bool, err error) {
	for {
		l, complete, err := readLine(br, MaxRecordBytes)
		if err != nil || !complete {
			return l, blank, complete, err
		}
		if len(bytes.TrimSpace(l)) > 0 {
			return l, blank, true, nil
		}
		if len(l) == 0 {
			return nil, blank, true, nil
		}
		blank++
	}
}

// lines reads JSON Lines: one record a line; first (line lead+1) and next (blank lines later) are read.
func (im *importer) lines(br *bufio.Reader, lead int, first []byte, blank int, next []byte) error {
	im.trajectoryKnown = true
	n := lead + 1
	l := first
	for {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			where := fmt.Sprintf("line %d", n)
			if !json.Valid(l) {
				var v any
				return &Error{where, "invalid JSON: " + json.Unmarshal(l, &v).Error()}
			}
			if l[0] != '{' {
				return &Error{where, "expected a JSON object (one message a line)"}
			}
			if err := im.record(record{where, l}); err != nil {
				return err
			}
		}
		if next != nil {
			l, n, next = next, n+blank+1, nil
			continue
		}
		line, complete, err := readLine(br, MaxRecordBytes)
		if err != nil || len(line) == 0 {
			return nil
		}
		if !complete {
			return &Error{fmt.Sprintf("line %d", n+1), errRecordTooLarge.Error()}
		}
		l, n = line, n+1
	}
}

// document reads one JSON document: a {"messages":[…]} object (or a trajectory's "history"), a bare array
// of messages, or a single message object.
func (im *importer) document(r io.Reader) error {
	im.pos = &tracker{r: r, lastNL: -1}
	dec := json.NewDecoder(im.pos)
	tok, err := dec.Token()
	if err != nil {
		return im.syntaxError(err)
	}
	var shape error
	switch tok {
	case json.Delim('['):
		im.trajectoryKnown = true
		im.pos.mark(dec.InputOffset(), "[")
		err = im.array(dec, "[", `""`, func(i int) string { return fmt.Sprintf("message %d", i+1) })
	case json.Delim('{'):
		im.pos.mark(dec.InputOffset(), "{")
		err = im.object(dec)
	default:
		im.pos.mark(dec.InputOffset(), `""`)
		shape = &Error{"input", "expected a JSON object, an array or JSON Lines"}
	}
	if err != nil {
		return err
	}
	// Only white space may follow the document.
	rest := bufio.NewReader(io.MultiReader(dec.Buffered(), im.pos))
	for {
		c, _, err := rest.ReadRune()
		if err != nil {
			return shape // at the end, or a read error, which errReader keeps
		}
		if !unicode.IsSpace(c) {
			return im.syntaxError(errors.New("invalid character after top-level value"))
		}
	}
}

// array reads the records of an array whose '[' dec has read; where names record i. inside and after are
// JSON prefixes that leave a scanner where the parse is inside the array and after it (see tracker).
func (im *importer) array(dec *json.Decoder, inside, after string, where func(i int) string) error {
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return im.syntaxError(err)
		}
		im.pos.mark(dec.InputOffset(), inside+`""`)
		if err := im.record(record{where(i), raw}); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return im.syntaxError(err)
	}
	im.pos.mark(dec.InputOffset(), after)
	return nil
}

// object reads a document object whose '{' dec has read. Its keys match case-insensitively, as
// encoding/json matches struct fields. Its messages are read as they come; the other keys it keeps until
// a list of messages is found, in case the object is a single message.
func (im *importer) object(dec *json.Decoder) error {
	list := "" // "messages" or "history", once found
	role, message := "", false
	type field struct {
		key string
		raw json.RawMessage
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return im.syntaxError(err)
		}
		im.pos.mark(dec.InputOffset(), `{""`)
		key, _ := tok.(string)
		isMessages, isHistory := strings.EqualFold(key, "messages"), strings.EqualFold(key, "history")
		// "messages" wins over "history", as when the document was decoded whole; a second list cannot be
		// told from the first without holding both.
		if isMessages && list != "" || isHistory && list == "history" {
			return &Error{"messages", `the document has more than one list of messages ("messages", "history")`}
		}
		if isMessages || isHistory && list == "" {
			list, fields = key, nil
			if err := im.messages(dec); err != nil {
				return err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return im.syntaxError(err)
		}
		im.pos.mark(dec.InputOffset(), `{"":""`)
		switch {
		case strings.EqualFold(key, "system"):
			im.system, err = systemText(raw)
			if err != nil {
				return err
			}
		case strings.EqualFold(key, "trajectory_format"):
			var s string
			if json.Unmarshal(raw, &s) == nil {
				im.trajectory = strings.HasPrefix(s, "mini-swe-agent")
			}
		case strings.EqualFold(key, "role"):
			_ = json.Unmarshal(raw, &role)
		case strings.EqualFold(key, "message"):
			message = true
		}
		if list == "" {
			fields = append(fields, field{key, raw})
		}
	}
	if _, err := dec.Token(); err != nil {
		return im.syntaxError(err)
	}
	im.pos.mark(dec.InputOffset(), `""`)
	im.trajectoryKnown = true
	if list != "" {
		return nil
	}
	if role == "" && !message {
		return &Error{"input", `a JSON object without "messages": expected {"messages":[...]}, an array of messages, or JSON Lines`}
	}
	// A single message: the object again, from its fields.
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(f.raw)
	}
	b.WriteByte('}')
	return im.record(record{"line 1", b.Bytes()})
}

// messages reads the value of a "messages" (or "history") key: an array of records, or null (none).
func (im *importer) messages(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return im.syntaxError(err)
	}
	if tok == json.Delim('[') {
		im.pos.mark(dec.InputOffset(), `{"":[`)
		return im.array(dec, `{"":[`, `{"":""`, func(i int) string { return fmt.Sprintf("message %d", i+1) })
	}
	if tok == nil {
		im.pos.mark(dec.InputOffset(), `{"":""`)
		return nil
	}
	found := "object"
	switch tok.(type) {
	case string:
		found = "string"
	case float64:
		found = "number"
	case bool:
		found = "bool"
	}
	return &Error{"messages", "expected an array of messages, found " + jsonKind(found)}
}

// syntaxError turns a failure to read the document into the error Import gives: the first JSON syntax
// error, located by line and column, as encoding/json reports it for the whole input.
func (im *importer) syntaxError(err error) error {
	if errors.Is(err, errRecordTooLarge) {
		return &Error{fmt.Sprintf("line %d", im.pos.lines+1), err.Error()}
	}
	if where, what, ok := im.pos.locate(); ok {
		return &Error{where, "invalid JSON: " + what}
	}
	return &Error{"input", "invalid JSON: " + err.Error()}
}

// tracker keeps the bytes a json.Decoder has read since the last point it parsed without error (a mark),
// and the state of the parse there, so that a syntax error can be located as in a decode of the whole input.
type tracker struct {
	r io.Reader
	// buf holds the bytes read from offset base on; the mark is at buf[head], where a scanner fed ctx is
	// in the state of the parse (a value there is a string, which nothing can extend, unlike a number).
	buf    []byte
	base   int64
	head   int
	ctx    string
	lines  int   // newlines before the mark
	lastNL int64 // offset of the last newline before the mark, -1 if none
	eof    bool  // the input has ended
}

func (t *tracker) Read(p []byte) (int, error) {
	room := MaxRecordBytes + 1 - (len(t.buf) - t.head) // one byte past the limit tells a record too large
	if room <= 0 {
		return 0, errRecordTooLarge
	}
	if len(p) > room {
		p = p[:room]
	}
	n, err := t.r.Read(p)
	t.eof = err == io.EOF
	if t.head > len(t.buf)/2 && t.head > 64<<10 {
		t.base += int64(t.head)
		t.buf = append(t.buf[:0], t.buf[t.head:]...)
		t.head = 0
	}
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// mark records that the input up to offset at parsed, leaving the parse in the state ctx gives a scanner.
func (t *tracker) mark(at int64, ctx string) {
	end := int(at - t.base)
	seen := t.buf[t.head:end]
	if n := bytes.Count(seen, []byte("\n")); n > 0 {
		t.lines += n
		t.lastNL = t.base + int64(t.head+bytes.LastIndexByte(seen, '\n'))
	}
	t.head, t.ctx = end, ctx
}

// locate finds the first syntax error after the mark: "line L, column C" and encoding/json's message.
func (t *tracker) locate() (where, what string, ok bool) {
	rest := t.buf[t.head:]
	if t.eof {
		rest = bytes.TrimRightFunc(rest, unicode.IsSpace) // as Import trims the input
	}
	err := json.Unmarshal(append([]byte(t.ctx), rest...), new(struct{}))
	se, isSyntax := err.(*json.SyntaxError)
	if !isSyntax {
		return "", "", false
	}
	n := min(max(int(se.Offset)-len(t.ctx), 0), len(rest)) // bytes after the mark up to the error
	lines, lastNL := t.lines, t.lastNL
	if i := bytes.LastIndexByte(rest[:n], '\n'); i >= 0 {
		lines += bytes.Count(rest[:n], []byte("\n"))
		lastNL = t.base + int64(t.head+i)
	}
	at := t.base + int64(t.head+n)
	return fmt.Sprintf("line %d, column %d", lines+1, at-lastNL), err.Error(), true
}

// record takes the next record: it is converted as soon as the format is known.
func (im *importer) record(r record) error {
	if im.format == Auto {
		f, ok := detectRecord(r.raw)
		if !ok {
			im.undecided = append(im.undecided, r)
			return nil
		}
		im.format = f
		if err := im.flushUndecided(); err != nil {
			return err
		}
	}
	return im.convert(r)
}

func (im *importer) flushUndecided() error {
	held := im.undecided
	im.undecided = nil
	for i := range held {
		if err := im.convert(held[i]); err != nil {
			return err
		}
		held[i] = record{}
	}
	return nil
}

// finish converts what is still held once the input has ended.
func (im *importer) finish() error {
	if im.format == Auto {
		im.format = OpenAI
		if err := im.flushUndecided(); err != nil {
			return err
		}
	}
	if im.exitRecord != nil && !im.trajectory {
		im.trajectoryKnown = true
		if err := im.convert(*im.exitRecord); err != nil {
			return err
		}
	}
	return im.flush()
}

// flush emits the held-back message.
func (im *importer) flush() error {
	if im.last == nil {
		return nil
	}
	m := *im.last
	im.last = nil
	m.Measure()
	return im.emit(m)
}

// recordProbe is what tells a record's kind: a message, a Claude Code record wrapping one, or bookkeeping.
type recordProbe struct {
	Role        string          `json:"role"`
	Type        string          `json:"type"`
	Message     json.RawMessage `json:"message"`
	IsSidechain bool            `json:"isSidechain"`
	Alisio      *alisioMeta     `json:"alisio"`
}

// openAIRecord is a record's probe and OpenAI message read in one decode (the common case, and half the
// work of two); when it fails, each is read on its own for its error.
type openAIRecord struct {
	openAIMsg
	Type        string          `json:"type"`
	Message     json.RawMessage `json:"message"`
	IsSidechain bool            `json:"isSidechain"`
}

// convert turns one record into messages, in the format now known.
func (im *importer) convert(r record) error {
	var probe recordProbe
	var decoded *openAIMsg // the record's OpenAI message, when read with its probe
	var both openAIRecord
	if im.format == OpenAI && json.Unmarshal(r.raw, &both) == nil {
		probe = recordProbe{both.Role, both.Type, both.Message, both.IsSidechain, both.Alisio}
		decoded = &both.openAIMsg
	} else if err := json.Unmarshal(r.raw, &probe); err != nil {
		return &Error{r.where, "not a message: " + jsonProblem(err)}
	}
	raw := r.raw
	if probe.Role == "" && len(probe.Message) == 0 && probe.Type != "" && im.format != OpenAI {
		// A Claude Code bookkeeping record (summary, file-history-snapshot, …): no message in it.
		im.out.Skipped = append(im.out.Skipped, fmt.Sprintf("%s: %s record", r.where, probe.Type))
		return nil
	}
	if probe.Role == "" && len(probe.Message) > 0 {
		// A Claude Code log record: keep the main conversation's user and assistant messages.
		if probe.IsSidechain || (probe.Type != "user" && probe.Type != "assistant") {
			im.out.Skipped = append(im.out.Skipped, fmt.Sprintf("%s: %s record", r.where, describeRecord(probe.Type, probe.IsSidechain)))
			return nil
		}
		raw, decoded = probe.Message, nil
	} else if probe.Role == "exit" && (im.trajectory || !im.trajectoryKnown) {
		if !im.trajectoryKnown && im.exitRecord == nil {
			im.exitRecord = &r // refused at the end unless the document says it is a trajectory
		}
		im.out.Skipped = append(im.out.Skipped, r.where+": the trajectory's exit record (the run's final output, not a message)")
		return nil
	}
	if probe.Alisio != nil && probe.Alisio.Truncated {
		// An audit export (export --all) holds a trimmed copy beside its original, with the same call ID.
		im.out.Skipped = append(im.out.Skipped, r.where+": a trimmed copy of an earlier message (export --all keeps both)")
		return nil
	}
	if probe.Alisio != nil && probe.Alisio.Compacted {
		im.out.Compacted++
	}
	var got []transcript.Message
	var err error
	if im.format == Anthropic {
		var id string
		got, id, err = anthropicMessage(raw)
		if err == nil && id != "" && id == im.lastAnthropicID && len(got) > 0 && im.last != nil && im.last.Role == transcript.RoleAssistant {
			if err := im.v.check(&got[0]); err != nil {
				return &Error{r.where, err.Error()}
			}
			mergeAssistant(im.last, got[0])
			got = got[1:]
		}
		im.lastAnthropicID = id
	} else if decoded != nil {
		got, err = decoded.messages()
	} else {
		got, err = openAIMessage(raw)
	}
	if err != nil {
		return &Error{r.where, err.Error()}
	}
	for _, m := range got {
		if err := im.v.check(&m); err != nil {
			return &Error{r.where, err.Error()}
		}
		if m.Role == transcript.RoleSystem && im.count == 0 {
			im.out.Instructions = append(im.out.Instructions, m.Text)
			continue
		}
		if err := im.flush(); err != nil {
			return err
		}
		im.last = &m
		im.count++
	}
	return nil
}

// jsonProblem says in a user's words what a decode error means: a value of the wrong kind is named by its
// key and the kind expected, never by the Go type that reads it.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	want := "a number"
	switch te.Type.Kind() {
	case reflect.Struct, reflect.Map:
		want = "an object"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.String:
		want = "a string"
	case reflect.Bool:
		want = "true or false"
	}
	found := jsonKind(te.Value)
	if te.Field == "" {
		return fmt.Sprintf("expected %s, found %s", want, found)
	}
	return fmt.Sprintf("%q must be %s, not %s", te.Field, want, found)
}

// jsonKind names a kind of JSON value as encoding/json spells it ("bool", "number", "number 1.5", "string",
// "array", "object") in a user's words: "true or false", "a number", "an array".
func jsonKind(value string) string {
	switch {
	case value == "bool":
		return "true or false"
	case strings.HasPrefix(value, "number"):
		return "a number"
	case value == "array" || value == "object":
		return "an " + value
	}
	return "a " + value
}

func describeRecord(typ string, sidechain bool) string {
	if sidechain {
		return "sub-agent (sidechain) " + typ
	}
	return typ
}

// detectRecord tells the format from one record: Anthropic when it uses content blocks or wraps a Claude
// Code message, OpenAI when it has tool calls or is a tool result; ok is false when it tells neither. A
// record whose content is a string tells it too (it once failed the probe and was passed over, which made
// a whole OpenAI transcript wait for its end to be read).
func detectRecord(raw json.RawMessage) (f Format, ok bool) {
	var probe struct {
		Role       string          `json:"role"`
		ToolCalls  json.RawMessage `json:"tool_calls"`
		ToolCallID string          `json:"tool_call_id"`
		Message    json.RawMessage `json:"message"`
		Content    json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &probe) != nil {
		return "", false
	}
	if probe.Role == "" && len(probe.Message) > 0 {
		return Anthropic, true
	}
	if len(probe.ToolCalls) > 0 || probe.ToolCallID != "" || probe.Role == "tool" {
		return OpenAI, true
	}
	var blocks []json.RawMessage // none when the content is a string
	_ = json.Unmarshal(probe.Content, &blocks)
	for _, c := range blocks {
		var b struct{ Type string }
		if json.Unmarshal(c, &b) == nil {
			switch b.Type {
			case "tool_use", "tool_result", "thinking", "redacted_thinking":
				return Anthropic, true
			}
		}
	}
	return "", false
}

func systemText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	text, _, err := textOf(raw)
	if err != nil {
		return "", &Error{"system", err.Error()}
	}
	return text, nil
}

// textOf reads content that is a string, null, or an array of blocks; text blocks are joined with newlines and
// the other blocks are returned raw.
func textOf(raw json.RawMessage) (string, []json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, nil, err
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", nil, fmt.Errorf("content must be a string or an array of blocks")
	}
	var texts []string
	var other []json.RawMessage
	for _, b := range blocks {
		var tb struct {
			Type string  `json:"type"`
			Text *string `json:"text"`
		}
		if err := json.Unmarshal(b, &tb); err != nil {
			return "", nil, fmt.Errorf("content block is not an object")
		}
		if tb.Type == "text" && tb.Text != nil {
			texts = append(texts, *tb.Text)
			continue
		}
		other = append(other, b)
	}
	return strings.Join(texts, "\n"), other, nil
}

// validator checks, message by message, that every tool result answers an earlier call still open, and that
// no two calls open at once share an ID. An ID may be reused once its call has its result, as trajectories
// that number their calls sequentially do (SWE-agent): a result pairs with the latest open call of its ID.
type validator struct{ calls, open map[string]bool }

func (v *validator) check(m *transcript.Message) error {
	if !m.Role.Valid() {
		return fmt.Errorf("unknown role %q (allowed: system, user, assistant, tool)", m.Role)
	}
	for _, c := range m.ToolCalls {
		if c.ID == "" {
			return fmt.Errorf("tool call %q has no ID", c.Name)
		}
		if v.open[c.ID] {
			return fmt.Errorf("tool call ID %q is used twice while its first call has no result", c.ID)
		}
		v.calls[c.ID], v.open[c.ID] = true, true
	}
	if m.Role != transcript.RoleTool {
		return nil
	}
	switch {
	case m.ToolCallID == "":
		return fmt.Errorf("tool result without a tool call ID")
	case !v.calls[m.ToolCallID]:
		return fmt.Errorf("tool result for call ID %q, which no earlier assistant message issued", m.ToolCallID)
	case !v.open[m.ToolCallID]:
		return fmt.Errorf("second result for call ID %q", m.ToolCallID)
	}
	delete(v.open, m.ToolCallID)
	return nil
}
