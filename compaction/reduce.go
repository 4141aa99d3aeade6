package compaction

import (
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Marker ends every cut (R3); caps include it.
const Marker = "… [truncated by context budget]"

var markerLen = utf8.RuneCountInString(Marker)

// Caps of the reduction rounds (R2): round k applies ToolCaps[k] to tool results and TextCaps[k] to
// user/assistant messages.
var (
	ToolCaps = []int{8000, 4096, 2048, 1024, 512}
	TextCaps = []int{16000, 8192, 4096, 2048, 1024}
)

// MinReductionTarget is the floor of the reduction target (R1).
const MinReductionTarget = 4000

// ReductionTarget is the transcript's character target: max(4000, maxContextChars − instructions) (R1).
func ReductionTarget(maxContextChars, instructionsChars int) int {
	return max(MinReductionTarget, maxContextChars-instructionsChars)
}

// Reduction is the result of Reduce.
type Reduction struct {
	// Replace maps transcript positions to their cut copies (Truncated, OriginalID set, new ID empty).
	Replace map[int]transcript.Message
	// Chars is the transcript's size after the cuts; Fits says it reached the target.
	Chars int
	Fits  bool
}

// Reduce cuts kept messages in place until the transcript fits target (R1–R3a, R5): rounds of descending
// caps, in each round the most expensive candidates first (ties: earlier first), one at a time, stopping as
// soon as it fits. Checkpoints are never cut; roles, IDs, order and boundaries never change.
func Reduce(msgs []transcript.Message, target int) Reduction {
	sizes := make([]int, len(msgs))
	total := 0
	for i := range msgs {
		sizes[i] = msgs[i].Chars()
		total += sizes[i]
	}
	red := Reduction{Replace: map[int]transcript.Message{}, Chars: total, Fits: total <= target}
	// A plain-text message cut to a cap is exactly that long, and cutting it again to a lower cap gives what
	// cutting the original once to the lower cap gives: its cuts are only counted during the rounds, and the
	// text is cut once, at the end, to its last cap. Messages with reasoning or tool calls are cut as they go.
	finalCap := map[int]int{}
	type cand struct{ pos, size int }
	for round := 0; round < len(ToolCaps) && !red.Fits; round++ {
		var cands []cand
		for i := range msgs {
			if c := capFor(&msgs[i], round); c > 0 && sizes[i] > c {
				cands = append(cands, cand{i, sizes[i]})
			}
		}
		sort.SliceStable(cands, func(a, b int) bool { return cands[a].size > cands[b].size })
		for _, c := range cands {
			limit := capFor(&msgs[c.pos], round)
			n := limit
			if plainText(&msgs[c.pos]) {
				finalCap[c.pos] = limit
			} else {
				cur, ok := red.Replace[c.pos]
				if !ok {
					cur = msgs[c.pos]
				}
				cut := cutMessage(cur, sizes[c.pos], limit)
				if n = cut.Chars(); n >= sizes[c.pos] {
					continue
				}
				red.Replace[c.pos] = markCut(cut, &msgs[c.pos])
			}
			total -= sizes[c.pos] - n
			sizes[c.pos] = n
			if total <= target {
				red.Fits = true
				break
			}
		}
	}
	for pos, limit := range finalCap {
		red.Replace[pos] = markCut(cutMessage(msgs[pos], msgs[pos].Chars(), limit), &msgs[pos])
	}
	red.Chars = total
	return red
}

// plainText reports a message whose cuts are exact: only text, so a cut to a cap leaves exactly the cap.
func plainText(m *transcript.Message) bool { return m.Reasoning == "" && len(m.ToolCalls) == 0 }

// markCut marks cut as the reduced copy of orig: a new message (no ID yet) that names the original, the first
// original when orig is itself a cut copy.
func markCut(cut transcript.Message, orig *transcript.Message) transcript.Message {
	cut.OriginalID, cut.ID, cut.Truncated = orig.ID, "", true
	if orig.Truncated && orig.OriginalID != "" {
		cut.OriginalID = orig.OriginalID
	}
	return cut
}

// capFor is the cap of round k for m, or 0 when m is never cut (checkpoints, system messages).
func capFor(m *transcript.Message, round int) int {
	if m.Summary {
		return 0
	}
	switch m.Role {
	case transcript.RoleTool:
		return ToolCaps[round]
	case transcript.RoleUser, transcript.RoleAssistant:
		return TextCaps[round]
	}
	return 0
}

// cutMessage shortens m (of size chars) to at most limit chars where possible: reasoning first (signed thinking
// blocks are dropped whole), then text, then the long string values of its tool call arguments (which stay
// valid JSON of the same shape, R3a). The text's length comes from size, not from counting it again.
func cutMessage(m transcript.Message, size, limit int) transcript.Message {
	excess := size - limit
	if excess <= 0 {
		return m
	}
	callChars := 0
	for _, c := range m.ToolCalls {
		callChars += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
	}
	reasoningChars := utf8.RuneCountInString(m.Reasoning)
	textChars := size - reasoningChars - callChars
	if m.HasSignedReasoning() {
		m, excess = transcript.DropThinking(m, excess)
	} else {
		m.Reasoning, excess = cutText(m.Reasoning, reasoningChars, excess)
	}
	m.Text, excess = cutText(m.Text, textChars, excess)
	if excess > 0 && len(m.ToolCalls) > 0 {
		calls := append([]transcript.ToolCall(nil), m.ToolCalls...)
		for excess > 0 {
			// Shorten the largest arguments first.
			best := -1
			for i := range calls {
				if best < 0 || utf8.RuneCountInString(calls[i].Arguments) > utf8.RuneCountInString(calls[best].Arguments) {
					best = i
				}
			}
			before := utf8.RuneCountInString(calls[best].Arguments)
			shorter, ok := cutJSONStrings(calls[best].Arguments, excess)
			after := utf8.RuneCountInString(shorter)
			if !ok || after >= before {
				break
			}
			calls[best].Arguments = shorter
			excess -= before - after
		}
		m.ToolCalls = calls
	}
	m.Measure()
	return m
}

// cutText removes about excess chars from the end of s (n chars long; never below the marker alone) and
// appends the marker; it returns the new text and the excess still to remove.
func cutText(s string, n, excess int) (string, int) {
	if excess <= 0 {
		return s, excess
	}
	body := strings.TrimSuffix(s, Marker)
	bodyRunes := n
	if len(body) < len(s) {
		bodyRunes -= markerLen
	}
	keep := max(0, n-excess-markerLen)
	if keep >= bodyRunes {
		return s, excess
	}
	removed := n - (keep + markerLen)
	if removed <= 0 {
		return s, excess
	}
	return body[:runeOffset(body, keep)] + Marker, excess - removed
}

// runeOffset is the byte offset of the rune with index runes in s.
func runeOffset(s string, runes int) int {
	i := 0
	for ; runes > 0 && i < len(s); runes-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// cutJSONStrings shortens the longest string values (never keys) of the JSON text args by about excess
// chars, each cut value ending with the marker. It reports false when args is not valid JSON or has nothing
// left to shorten.
func cutJSONStrings(args string, excess int) (string, bool) {
	if !json.Valid([]byte(args)) {
		return args, false
	}
	spans := stringValueSpans(args)
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].runes > spans[b].runes })
	if len(spans) == 0 || spans[0].runes <= markerLen+2 {
		return args, false
	}
	sp := spans[0]
	var val string
	if json.Unmarshal([]byte(args[sp.start:sp.end]), &val) != nil {
		return args, false
	}
	cut, _ := cutText(val, utf8.RuneCountInString(val), excess)
	enc, _ := marshalNoEscape(cut)
	return args[:sp.start] + enc + args[sp.end:], true
}

type jsonSpan struct{ start, end, runes int }

// stringValueSpans finds the byte spans of the string literals of a valid JSON text that are values, not keys.
func stringValueSpans(s string) []jsonSpan {
	var spans []jsonSpan
	p := scanner{s: s}
	for !p.eof() {
		if p.peek() != '"' {
			p.i++
			continue
		}
		st := p.i
		p.str()
		end := p.i
		q := scanner{s: s, i: end}
		q.space()
		if q.eof() || q.peek() != ':' {
			spans = append(spans, jsonSpan{st, end, utf8.RuneCountInString(s[st:end])})
		}
	}
	return spans
}

func marshalNoEscape(s string) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n"), err
}
