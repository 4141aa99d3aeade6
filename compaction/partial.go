package compaction

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// PartialObject is what ParsePartial recovered from a JSON object that may have been cut off.
type PartialObject struct {
	// Fields holds every member whose value was complete, byte-exact.
	Fields map[string]json.RawMessage
	// Order lists the complete members in the order they appeared.
	Order []string
	// Cut names the member whose value the end of the input interrupted ("" if none); CutValue is the
	// salvaged prefix of that value as valid JSON (the complete elements of an array, or a string's text),
	// or nil when nothing of it is usable.
	Cut      string
	CutValue json.RawMessage
	// Complete reports whether the object was closed.
	Complete bool
}

// ParsePartial reads the first JSON object in text (after any prose or a ``` fence) and recovers as much as it
// can when the text stops early, as when the summarizer's output budget cuts its reply. It never fails: an
// input with no object yields an empty result.
func ParsePartial(text string) PartialObject {
	out := PartialObject{Fields: map[string]json.RawMessage{}}
	start := strings.IndexByte(text, '{')
	if start < 0 {
		return out
	}
	p := scanner{s: text, i: start + 1}
	for {
		p.space()
		if p.eof() {
			return out
		}
		if p.peek() == '}' {
			out.Complete = true
			return out
		}
		if p.peek() == ',' {
			p.i++
			continue
		}
		keyStart := p.i
		if !p.str() {
			return out
		}
		var key string
		if json.Unmarshal([]byte(text[keyStart:p.i]), &key) != nil {
			return out
		}
		p.space()
		if p.eof() || p.peek() != ':' {
			return out
		}
		p.i++
		p.space()
		valStart := p.i
		if p.value() {
			raw := json.RawMessage(text[valStart:p.i])
			if !json.Valid(raw) {
				return out
			}
			if _, dup := out.Fields[key]; !dup {
				out.Order = append(out.Order, key)
			}
			out.Fields[key] = raw
			continue
		}
		if !p.eof() {
			return out // malformed, not merely cut
		}
		out.Cut = key
		out.CutValue = salvage(text[valStart:])
		return out
	}
}

// salvage turns the cut-off beginning of a value into valid JSON: a string keeps its complete characters, an
// array keeps its complete elements and drops the one the cut interrupted (a half-written item is not a fact).
// Anything else is not usable.
func salvage(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	switch v[0] {
	case '"':
		s := cutString(v[1:])
		if strings.TrimSpace(s) == "" {
			return nil
		}
		b, _ := json.Marshal(s)
		return b
	case '[':
		p := scanner{s: v, i: 1}
		var elems []json.RawMessage
		for {
			p.space()
			if p.eof() {
				break
			}
			if p.peek() == ',' {
				p.i++
				continue
			}
			st := p.i
			if !p.value() {
				break
			}
			if json.Valid([]byte(v[st:p.i])) {
				elems = append(elems, json.RawMessage(v[st:p.i]))
			}
		}
		if len(elems) == 0 {
			return nil
		}
		b, _ := json.Marshal(elems)
		return b
	}
	return nil
}

// cutString decodes the body of a JSON string that lost its end, dropping an escape the cut interrupted.
func cutString(body string) string {
	for end := len(body); end >= 0; end-- {
		var s string
		if json.Unmarshal([]byte(`"`+body[:end]+`"`), &s) == nil {
			return s
		}
		if len(body)-end > 12 {
			break
		}
	}
	// Fall back to the raw characters up to the last backslash.
	if i := strings.LastIndexByte(body, '\\'); i >= 0 {
		body = body[:i]
	}
	return strings.ToValidUTF8(body, "")
}

// scanner walks JSON text; each method returns false when the value is malformed or the text ends first.
type scanner struct {
	s string
	i int
}

func (p *scanner) eof() bool  { return p.i >= len(p.s) }
func (p *scanner) peek() byte { return p.s[p.i] }

func (p *scanner) space() {
	for !p.eof() && strings.IndexByte(" \t\r\n", p.peek()) >= 0 {
		p.i++
	}
}

func (p *scanner) str() bool {
	if p.eof() || p.peek() != '"' {
		return false
	}
	for p.i++; !p.eof(); p.i++ {
		switch p.peek() {
		case '\\':
			p.i++
		case '"':
			p.i++
			return true
		}
	}
	p.i = len(p.s)
	return false
}

func (p *scanner) value() bool {
	p.space()
	if p.eof() {
		return false
	}
	switch c := p.peek(); c {
	case '"':
		return p.str()
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		p.i++
		for {
			p.space()
			if p.eof() {
				return false
			}
			switch p.peek() {
			case closer:
				p.i++
				return true
			case ',', ':':
				p.i++
				continue
			}
			if !p.value() {
				return false
			}
		}
	default:
		st := p.i
		for !p.eof() && strings.IndexByte(",}] \t\r\n", p.peek()) < 0 {
			_, size := utf8.DecodeRuneInString(p.s[p.i:])
			p.i += size
		}
		if p.eof() {
			return false // a literal at the very end may be cut (tru…, 12…)
		}
		return p.i > st
	}
}
