package compaction

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ErrInvalidCheckpoint: an edited checkpoint is not JSON, does not follow the checkpoint schema, or is too large;
// the error says what and where.
var ErrInvalidCheckpoint = errors.New("the edited checkpoint was refused")

// Editable is the part of cp a user edits: its seven schema fields, as a JSON document (a text-only checkpoint's
// text is its currentState). What code carries (the user's words, the fidelity, the count it stands for) is
// not in it and survives the edit.
func Editable(cp Checkpoint) json.RawMessage {
	e := cp
	if e.Text != "" && e.CurrentState == "" {
		e.CurrentState = e.Text
	}
	for _, f := range []*[]string{&e.Instructions, &e.Discoveries, &e.Accomplished, &e.NextSteps} {
		if *f == nil {
			*f = []string{}
		}
	}
	if e.RelevantFiles == nil {
		e.RelevantFiles = []RelevantFile{}
	}
	// Only the seven schema fields, in the schema's order: what code carries is left out (omitempty).
	doc := Checkpoint{Goal: e.Goal, Instructions: e.Instructions, Discoveries: e.Discoveries, Accomplished: e.Accomplished,
		CurrentState: e.CurrentState, NextSteps: e.NextSteps, RelevantFiles: e.RelevantFiles}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(doc)
	return b.Bytes()
}

// EditCheckpoint checks an edited checkpoint document against the checkpoint schema, field by field as a
// model's reply is, but strictly: every field present and valid, nothing else. It returns the checkpoint that
// replaces current, carrying what code added to current (the user's words, fidelity, the count it stands
// for), and the message that holds it. maxChars bounds the rendered checkpoint (0: no bound).
func EditCheckpoint(doc []byte, current Checkpoint, maxChars int) (Checkpoint, transcript.Message, error) {
	var fields map[string]json.RawMessage
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf")) // the byte-order mark some editors write first
	if len(bytes.TrimSpace(doc)) == 0 {
		return Checkpoint{}, transcript.Message{}, fmt.Errorf("%w: the document is empty", ErrInvalidCheckpoint)
	}
	if err := json.Unmarshal(doc, &fields); err != nil {
		return Checkpoint{}, transcript.Message{}, fmt.Errorf("%w: %s", ErrInvalidCheckpoint, jsonProblem(doc, err))
	}
	var problems []string
	if twice := repeatedFields(doc); len(twice) > 0 {
		problems = append(problems, fmt.Sprintf("field(s) %s appear more than once: keep one of each", strings.Join(twice, ", ")))
	}
	var unknown []string
	for name := range fields {
		if !contains(Fields, name) {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 {
		problems = append(problems, fmt.Sprintf("unknown field(s) %s (the fields are %s)", strings.Join(unknown, ", "), strings.Join(Fields, ", ")))
	}
	for _, f := range Fields {
		raw, ok := fields[f]
		switch {
		case !ok:
			problems = append(problems, f+" is missing")
		case f == "goal" && (string(raw) == `""` || strings.TrimSpace(strings.Trim(string(raw), `"`)) == ""):
			problems = append(problems, "goal is empty: say in a sentence what the session is trying to achieve")
		default:
			if err := validateField(f, raw); err != nil {
				problem := schemaProblem(f, err)
				if f == "relevantFiles" {
					problem += ` (each file is {"path": "…", "reason": "…"})`
				}
				problems = append(problems, problem)
			}
		}
	}
	if len(problems) > 0 {
		return Checkpoint{}, transcript.Message{}, fmt.Errorf("%w: %s", ErrInvalidCheckpoint, strings.Join(problems, "; "))
	}
	var cp Checkpoint
	if err := json.Unmarshal(doc, &cp); err != nil {
		return Checkpoint{}, transcript.Message{}, fmt.Errorf("%w: %v", ErrInvalidCheckpoint, err)
	}
	cp.UserWords, cp.UserWordsOmitted, cp.Fidelity, cp.Replaced, cp.Context = current.UserWords, current.UserWordsOmitted, current.Fidelity, current.Replaced, current.Context
	text := cp.Render()
	// A checkpoint may take a quarter of the context budget, or as much as the one it replaces.
	if n := utf8.RuneCountInString(text); maxChars > 0 && n > max(maxChars, utf8.RuneCountInString(current.Render())) {
		return Checkpoint{}, transcript.Message{}, fmt.Errorf("%w: it is too large: %d characters, more than the %d a checkpoint may take (a quarter of the context budget); shorten it",
			ErrInvalidCheckpoint, n, maxChars)
	}
	return cp, transcript.Message{Role: transcript.RoleUser, Summary: true, Text: text, Structured: cp.structured()}, nil
}

// jsonProblem says what is wrong with a document that is not JSON, with the line and column of a syntax error
// rather than its byte offset.
func jsonProblem(doc []byte, err error) string {
	var syntax *json.SyntaxError
	if !errors.As(err, &syntax) {
		return "it is not a JSON object of the checkpoint's fields: it is " + jsonKind(doc) + `; the document is {"goal": …, "instructions": […], …}`
	}
	before := doc[:min(int(syntax.Offset), len(doc))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := max(1, utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]))
	return fmt.Sprintf("JSON syntax error at line %d, column %d: %s", line, col, strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the kind of JSON value doc holds, by its first character.
func jsonKind(doc []byte) string {
	switch t := bytes.TrimSpace(doc); {
	case len(t) == 0:
		return "empty"
	case t[0] == '[':
		return "an array"
	case t[0] == '"':
		return "a string"
	case t[0] == 't' || t[0] == 'f':
		return "a boolean"
	case t[0] == 'n':
		return "null"
	default:
		return "a number"
	}
}

// repeatedFields are the names given more than once in the JSON object doc (a decoder keeps the last, and
// the user would not know which one was stored).
func repeatedFields(doc []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]int{}
	var twice []string
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		var value json.RawMessage
		if err != nil || !ok || dec.Decode(&value) != nil {
			return twice
		}
		if seen[name]++; seen[name] == 2 {
			twice = append(twice, name)
		}
	}
	return twice
}

// CheckpointLimit is the most chars a checkpoint may take under a hard limit of hardLimit chars (a quarter;
// 0: no bound).
func CheckpointLimit(hardLimit int) int {
	if hardLimit <= 0 {
		return 0
	}
	return hardLimit / 4
}

// schemaProblem says what is wrong with field, from the schema validator's error: its detail lines
// ("- at '/0': got number, want string") with the field's name in the place, without the schema's own URL.
func schemaProblem(field string, err error) string {
	var out []string
	lines := strings.Split(err.Error(), "\n")
	for _, line := range lines[min(1, len(lines)-1):] {
		line = strings.TrimPrefix(strings.TrimSpace(line), "- ")
		if rest, ok := strings.CutPrefix(line, "at '"); ok {
			if ptr, msg, ok := strings.Cut(rest, "': "); ok {
				line = field + ptr + ": " + msg
			}
		}
		if line != "" {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return field + ": " + strings.Join(strings.Fields(err.Error()), " ")
	}
	return strings.Join(out, "; ")
}
