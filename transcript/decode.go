package transcript

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// UnmarshalMessage decodes data into *m (overwritten) with the result and the error json.Unmarshal gives for a
// zero Message, several times faster for what json.Marshal writes, which is how the store keeps messages:
// object keys spelled as the struct tags, no nulls, strings without surrogate escapes, integer token counts.
// Anything else (other spellings of the keys, unknown or repeated keys, nulls, syntax or type errors) is left
// to json.Unmarshal itself.
func UnmarshalMessage(data []byte, m *Message) error {
	*m = Message{}
	d := decoder{data: data}
	if d.message(m) {
		return nil
	}
	*m = Message{}
	return json.Unmarshal(data, m)
}

// decoder reads the canonical JSON form of a Message; each of its methods reports false as soon as the input
// leaves that form, and the caller then falls back to encoding/json.
type decoder struct {
	data []byte
	pos  int
}

// The fields of a Message, as bits of the set of fields already read (a repeated key leaves the fast path).
const (
	fID = 1 << iota
	fRole
	fText
	fReasoning
	fToolCalls
	fToolCallID
	fToolName
	fIsError
	fDeclined
	fItems
	fSummary
	fStructured
	fPartial
	fCompacted
	fUndone
	fTruncated
	fOriginalID
	fCreatedAt
	fUsage
)

func (d *decoder) message(m *Message) bool {
	seen := 0
	ok := d.object(func(key []byte) bool {
		var bit int
		var ok bool
		switch string(key) {
		case "id":
			bit, ok = fID, d.str(&m.ID)
		case "role":
			var s string
			bit, ok = fRole, d.str(&s)
			m.Role = Role(s)
		case "text":
			bit, ok = fText, d.str(&m.Text)
		case "reasoning":
			bit, ok = fReasoning, d.str(&m.Reasoning)
		case "toolCalls":
			bit, ok = fToolCalls, d.toolCalls(&m.ToolCalls)
		case "toolCallId":
			bit, ok = fToolCallID, d.str(&m.ToolCallID)
		case "toolName":
			bit, ok = fToolName, d.str(&m.ToolName)
		case "isError":
			bit, ok = fIsError, d.boolean(&m.IsError)
		case "declined":
			bit, ok = fDeclined, d.boolean(&m.Declined)
		case "items":
			bit, ok = fItems, d.items(&m.Items)
		case "summary":
			bit, ok = fSummary, d.boolean(&m.Summary)
		case "structured":
			bit, ok = fStructured, d.raw(&m.Structured)
		case "partial":
			bit, ok = fPartial, d.boolean(&m.Partial)
		case "compacted":
			bit, ok = fCompacted, d.boolean(&m.Compacted)
		case "undone":
			bit, ok = fUndone, d.boolean(&m.Undone)
		case "truncated":
			bit, ok = fTruncated, d.boolean(&m.Truncated)
		case "originalId":
			bit, ok = fOriginalID, d.str(&m.OriginalID)
		case "createdAt":
			bit, ok = fCreatedAt, d.time(m)
		case "usage":
			m.Usage = &Usage{}
			bit, ok = fUsage, d.usage(m.Usage)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	d.space()
	return ok && d.pos == len(d.data)
}

func (d *decoder) toolCalls(out *[]ToolCall) bool {
	calls := []ToolCall{}
	ok := d.array(func() bool {
		seen := 0
		calls = append(calls, ToolCall{})
		return d.object(func(key []byte) bool {
			var bit int
			var ok bool
			p := &calls[len(calls)-1]
			switch string(key) {
			case "id":
				bit, ok = 1, d.str(&p.ID)
			case "name":
				bit, ok = 2, d.str(&p.Name)
			case "arguments":
				bit, ok = 4, d.str(&p.Arguments)
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			return true
		})
	})
	*out = calls
	return ok
}

func (d *decoder) items(out *[]ProviderItem) bool {
	items := []ProviderItem{}
	ok := d.array(func() bool {
		seen := 0
		items = append(items, ProviderItem{})
		return d.object(func(key []byte) bool {
			var bit int
			var ok bool
			p := &items[len(items)-1]
			switch string(key) {
			case "kind":
				bit, ok = 1, d.str(&p.Kind)
			case "data":
				bit, ok = 2, d.raw(&p.Data)
			}
			if !ok || seen&bit != 0 {
				return false
			}
			seen |= bit
			return true
		})
	})
	*out = items
	return ok
}

func (d *decoder) usage(u *Usage) bool {
	seen := 0
	return d.object(func(key []byte) bool {
		var bit int
		var ok bool
		switch string(key) {
		case "promptTokens":
			bit, ok = 1, d.integer(&u.PromptTokens)
		case "completionTokens":
			bit, ok = 2, d.integer(&u.CompletionTokens)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// time reads createdAt the way encoding/json does: the quoted token goes to time.Time's UnmarshalJSON.
func (d *decoder) time(m *Message) bool {
	d.space()
	start := d.pos
	if !d.skipString() {
		return false
	}
	return m.CreatedAt.UnmarshalJSON(d.data[start:d.pos]) == nil
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// next skips white space and consumes c.
func (d *decoder) next(c byte) bool {
	d.space()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// object reads an object, calling member with the raw bytes of each key (an escaped key matches no field and
// leaves the fast path) once the reader is at its value.
func (d *decoder) object(member func(key []byte) bool) bool {
	if !d.next('{') {
		return false
	}
	if d.next('}') {
		return true
	}
	for {
		d.space()
		start := d.pos + 1
		if !d.skipString() {
			return false
		}
		key := d.data[start : d.pos-1]
		if !d.next(':') || !member(key) {
			return false
		}
		if d.next('}') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

// array reads an array, calling elem for each element.
func (d *decoder) array(elem func() bool) bool {
	if !d.next('[') {
		return false
	}
	if d.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.next(']') {
			return true
		}
		if !d.next(',') {
			return false
		}
	}
}

func (d *decoder) boolean(out *bool) bool {
	d.space()
	switch {
	case bytes.HasPrefix(d.data[d.pos:], []byte("true")):
		*out, d.pos = true, d.pos+4
	case bytes.HasPrefix(d.data[d.pos:], []byte("false")):
		*out, d.pos = false, d.pos+5
	default:
		return false
	}
	return d.delimited()
}

// delimited reports whether a literal or number ends where the reader is (else it runs on, as in "truex").
func (d *decoder) delimited() bool {
	if d.pos == len(d.data) {
		return true
	}
	switch d.data[d.pos] {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// integer reads a JSON integer that fits an int.
func (d *decoder) integer(out *int) bool {
	d.space()
	start := d.pos
	if d.pos < len(d.data) && d.data[d.pos] == '-' {
		d.pos++
	}
	first := d.pos
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		d.pos++
	}
	if d.pos == first || d.pos-first > 1 && d.data[first] == '0' || !d.delimited() {
		return false
	}
	n, err := strconv.ParseInt(string(d.data[start:d.pos]), 10, 0)
	*out = int(n)
	return err == nil
}

// raw reads any JSON value but null as its bytes, as json.RawMessage's UnmarshalJSON keeps them.
func (d *decoder) raw(out *json.RawMessage) bool {
	d.space()
	start := d.pos
	if d.pos == len(d.data) {
		return false
	}
	switch d.data[d.pos] {
	case '"':
		if !d.skipString() {
			return false
		}
	case '{', '[':
		for depth := 0; ; {
			if d.pos >= len(d.data) {
				return false
			}
			c := d.data[d.pos]
			if c == '"' {
				if !d.skipString() {
					return false
				}
				continue
			}
			d.pos++
			if c == '{' || c == '[' {
				depth++
			} else if c == '}' || c == ']' {
				if depth--; depth == 0 {
					break
				}
			}
		}
	default:
		for !d.delimited() {
			d.pos++
		}
	}
	v := d.data[start:d.pos]
	if string(v) == "null" || !json.Valid(v) {
		return false
	}
	*out = bytes.Clone(v)
	return true
}

// skipString moves past a string token, checking only that it is closed.
func (d *decoder) skipString() bool {
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return false
	}
	for i := d.pos + 1; i < len(d.data); i++ {
		switch d.data[i] {
		case '\\':
			i++
		case '"':
			d.pos = i + 1
			return true
		}
	}
	return false
}

// str reads a string token. Invalid UTF-8, control characters and surrogate escapes leave the fast path
// (encoding/json replaces or refuses them).
func (d *decoder) str(out *string) bool {
	d.space()
	if d.pos >= len(d.data) || d.data[d.pos] != '"' {
		return false
	}
	start := d.pos + 1
	ascii, escaped := true, false
	i := start
	for {
		for i < len(d.data) && !strSpecial[d.data[i]] {
			i++
		}
		if i >= len(d.data) {
			return false
		}
		c := d.data[i]
		if c == '"' {
			break
		}
		switch {
		case c == '\\':
			escaped = true
			i += 2
		case c < 0x20:
			return false
		default:
			ascii = false
			i++
		}
	}
	s := d.data[start:i]
	d.pos = i + 1
	if !ascii && !utf8.Valid(s) {
		return false
	}
	if !escaped {
		*out = string(s)
		return true
	}
	return unescape(s, out)
}

// strSpecial marks the bytes that end a plain run inside a string token: the quote, the backslash, control
// characters and the bytes of non-ASCII characters.
var strSpecial = func() (t [256]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf
	}
	return t
}()

// unescape decodes the escapes of s, the inside of a string token.
func unescape(s []byte, out *string) bool {
	var b strings.Builder
	b.Grow(len(s))
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			b.Write(s)
			break
		}
		b.Write(s[:i])
		if i+1 >= len(s) {
			return false
		}
		c := s[i+1]
		s = s[i+2:]
		switch c {
		case '"', '\\', '/':
			b.WriteByte(c)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s)
			if !ok || r >= 0xD800 && r < 0xE000 {
				return false
			}
			b.WriteRune(r)
			s = s[4:]
		default:
			return false
		}
	}
	*out = b.String()
	return true
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
