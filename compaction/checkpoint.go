package compaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checkpoint is the structured summary that replaces compacted messages (C2).
type Checkpoint struct {
	Goal          string         `json:"goal"`
	Instructions  []string       `json:"instructions"`
	Discoveries   []string       `json:"discoveries"`
	Accomplished  []string       `json:"accomplished"`
	CurrentState  string         `json:"currentState"`
	NextSteps     []string       `json:"nextSteps"`
	RelevantFiles []RelevantFile `json:"relevantFiles"`
	// Text is set instead of the fields when the summarizer did not return valid JSON (a text-only checkpoint).
	Text string `json:"text,omitempty"`
	// Partial says the output budget cut the summary (P2); Missing lists the fields it lacks.
	Partial bool     `json:"partial,omitempty"`
	Missing []string `json:"missing,omitempty"`
	// UserWords are the user's messages of the replaced spans, word for word, newest first (set by code,
	// never by the model; see carryUserWords).
	UserWords []string `json:"userWords,omitempty"`
	// UserWordsOmitted counts the user's messages left unquoted for lack of room.
	UserWordsOmitted int `json:"userWordsOmitted,omitempty"`
	// Fidelity is how much of the span's ledger the summarizer's checkpoint covered before Merge completed it.
	Fidelity Fidelity `json:"fidelity,omitempty"`
	// Replaced counts the messages the checkpoint stands for, those its predecessors replaced included.
	Replaced int `json:"replaced,omitempty"`
	// Context is what the plugins placed after the checkpoint (their AfterCompact injectContext): sent with it,
	// kept by an edit of it, replaced by the next compaction's.
	Context string `json:"context,omitempty"`
}

// RelevantFile is a file the checkpoint points the model to.
type RelevantFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Fields are the checkpoint's JSON fields in schema order.
var Fields = []string{"goal", "instructions", "discoveries", "accomplished", "currentState", "nextSteps", "relevantFiles"}

const checkpointSchemaJSON = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["goal", "instructions", "discoveries", "accomplished", "currentState", "nextSteps", "relevantFiles"],
  "properties": {
    "goal": {"type": "string", "description": "What the session is trying to achieve, in one or two sentences."},
    "instructions": {"type": "array", "items": {"type": "string"}, "description": "Every instruction and constraint the user gave, quoted verbatim."},
    "discoveries": {"type": "array", "items": {"type": "string"}, "description": "Facts learned on the way: causes found, APIs, commands that work or fail."},
    "accomplished": {"type": "array", "items": {"type": "string"}, "description": "Work already done, naming files and decisions, so it is not redone."},
    "currentState": {"type": "string", "description": "Where the work stands right now, including anything left half-done."},
    "nextSteps": {"type": "array", "items": {"type": "string"}, "description": "What remains, in order."},
    "relevantFiles": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["path", "reason"],
      "properties": {"path": {"type": "string"}, "reason": {"type": "string"}}}, "description": "Files that matter and why."}
  }
}`

// CheckpointSchema returns the JSON Schema the summarizer is asked to follow, restricted to fields when fields
// is not empty (the follow-up call that asks only for missing fields).
func CheckpointSchema(fields []string) json.RawMessage {
	if len(fields) == 0 {
		return json.RawMessage(checkpointSchemaJSON)
	}
	var s map[string]any
	_ = json.Unmarshal([]byte(checkpointSchemaJSON), &s)
	props := s["properties"].(map[string]any)
	keep := map[string]any{}
	for _, f := range fields {
		keep[f] = props[f]
	}
	s["properties"], s["required"] = keep, fields
	b, _ := json.Marshal(s)
	return b
}

var (
	schemaOnce   sync.Once
	fieldSchemas map[string]*jsonschema.Schema
	schemaErr    error
)

// fieldSchema returns the compiled schema of one checkpoint field.
func fieldSchema(name string) (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(checkpointSchemaJSON))
		if err != nil {
			schemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("checkpoint.json", doc); err != nil {
			schemaErr = err
			return
		}
		fieldSchemas = map[string]*jsonschema.Schema{}
		for _, f := range Fields {
			if fieldSchemas[f], err = c.Compile("checkpoint.json#/properties/" + f); err != nil {
				schemaErr = err
				return
			}
		}
	})
	return fieldSchemas[name], schemaErr
}

// parseReply turns the summarizer's reply into a checkpoint. cut says the output budget stopped the reply.
// Fields are validated one by one against the schema, so one bad field does not discard the others; a reply
// with no valid field is kept as a text-only checkpoint (C2), unless it is empty.
func parseReply(text string, cut bool) (Checkpoint, error) {
	po := ParsePartial(text)
	var cp Checkpoint
	valid := map[string]json.RawMessage{}
	for _, f := range Fields {
		raw, ok := po.Fields[f]
		if !ok && po.Cut == f && po.CutValue != nil {
			raw, ok = po.CutValue, true
		}
		if !ok {
			continue
		}
		if err := validateField(f, raw); err != nil {
			continue
		}
		valid[f] = raw
	}
	if len(valid) == 0 {
		t := strings.TrimSpace(text)
		if t == "" || (cut && strings.HasPrefix(t, "{")) {
			return cp, errNothingUsable
		}
		cp.Text, cp.Partial = t, cut
		return cp, nil
	}
	obj, _ := json.Marshal(valid)
	if err := json.Unmarshal(obj, &cp); err != nil {
		return cp, fmt.Errorf("decoding checkpoint: %w", err)
	}
	for _, f := range Fields {
		if _, ok := valid[f]; !ok || f == po.Cut {
			cp.Missing = append(cp.Missing, f)
		}
	}
	cp.Partial = cut || !po.Complete || len(cp.Missing) > 0
	return cp, nil
}

func validateField(name string, raw json.RawMessage) error {
	sch, err := fieldSchema(name)
	if err != nil {
		return fmt.Errorf("compiling checkpoint schema: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// merge fills the fields of cp listed in fields from other (the follow-up reply) and returns which it filled.
// It patches cp through the fields' JSON, so it follows the schema without naming each field.
func (cp *Checkpoint) merge(other Checkpoint, fields []string) []string {
	var mine, theirs map[string]any
	raw, _ := json.Marshal(cp)
	_ = json.Unmarshal(raw, &mine)
	raw, _ = json.Marshal(other)
	_ = json.Unmarshal(raw, &theirs)
	patch := map[string]any{}
	var got []string
	for _, f := range fields {
		if contains(other.Missing, f) {
			continue
		}
		patch[f] = combine(mine[f], theirs[f])
		got = append(got, f)
	}
	raw, _ = json.Marshal(patch)
	_ = json.Unmarshal(raw, cp) // only the patched fields change
	var still []string
	for _, f := range cp.Missing {
		if !contains(got, f) {
			still = append(still, f)
		}
	}
	cp.Missing = still
	cp.Partial = len(still) > 0
	return got
}

// combine merges a field salvaged from a cut reply (salvaged) with the follow-up's value for it (more),
// never dropping what was salvaged: arrays keep the salvaged elements and add the new ones; a string keeps the
// longer of two where one contains the other, else both.
func combine(salvaged, more any) any {
	switch old := salvaged.(type) {
	case []any:
		added, _ := more.([]any)
		out := append([]any(nil), old...)
		seen := map[string]bool{}
		for _, e := range old {
			b, _ := json.Marshal(e)
			seen[string(b)] = true
		}
		for _, e := range added {
			if b, _ := json.Marshal(e); !seen[string(b)] {
				seen[string(b)] = true
				out = append(out, e)
			}
		}
		return out
	case string:
		next, _ := more.(string)
		switch {
		case strings.TrimSpace(old) == "" || strings.Contains(next, old):
			return next
		case next == "" || strings.Contains(old, next):
			return old
		}
		return old + "\n" + next
	}
	return more
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Render is the checkpoint as the model reads it.
func (cp *Checkpoint) Render() string {
	var b strings.Builder
	b.WriteString("[Checkpoint: a summary of the earlier part of this conversation, which was compacted. Treat it as your own memory of that work.]\n")
	if cp.Replaced > 0 {
		fmt.Fprintf(&b, "(It stands for %d earlier messages, which are kept word for word: the recall tool searches and reads them when exact wording, code, commands or error lines matter.)\n", cp.Replaced)
	}
	if cp.Partial {
		b.WriteString("(This checkpoint is partial: the summary was cut short; verify anything it does not cover.)\n")
	}
	section := func(title, text string) {
		if strings.TrimSpace(text) != "" {
			fmt.Fprintf(&b, "\n## %s\n%s\n", title, text)
		}
	}
	list := func(title string, items []string) {
		lines := make([]string, len(items))
		for i, item := range items {
			lines[i] = ListItem(item)
		}
		section(title, strings.Join(lines, "\n"))
	}
	if cp.Text != "" {
		// A text-only checkpoint: the summarizer's text, then what code added to it.
		b.WriteString("\n")
		b.WriteString(cp.Text)
		b.WriteString("\n")
		list("User instructions and constraints", cp.Instructions)
		list("Relevant files", cp.files())
		section(userWordsTitle, quoteAll(cp.UserWords, cp.UserWordsOmitted))
		return cp.withContext(b.String())
	}
	section("Goal", cp.Goal)
	list("User instructions and constraints", cp.Instructions)
	list("Discoveries", cp.Discoveries)
	list("Accomplished", cp.Accomplished)
	section("Current state", cp.CurrentState)
	list("Next steps", cp.NextSteps)
	list("Relevant files", cp.files())
	section(userWordsTitle, quoteAll(cp.UserWords, cp.UserWordsOmitted))
	return cp.withContext(b.String())
}

// ListItem is text as an item of a Markdown list: its lines after the first indented under the first, so that
// an item of several lines stays one item.
func ListItem(text string) string {
	return "- " + strings.ReplaceAll(strings.TrimRight(text, "\n"), "\n", "\n  ")
}

// withContext ends the rendered checkpoint text with the plugins' context.
func (cp *Checkpoint) withContext(text string) string {
	text = strings.TrimRight(text, "\n")
	if cp.Context != "" {
		text += "\n\n" + cp.Context
	}
	return text
}

// files are the relevant files as the model reads them, one line each.
func (cp *Checkpoint) files() []string {
	var files []string
	for _, f := range cp.RelevantFiles {
		files = append(files, strings.TrimSpace(f.Path+" — "+f.Reason))
	}
	return files
}

// structured returns the checkpoint's JSON for the editor (stored on the checkpoint message).
func (cp *Checkpoint) structured() json.RawMessage {
	b, _ := json.Marshal(cp)
	return b
}

// ParseStructured reads the structured fields stored on a checkpoint message.
func ParseStructured(raw json.RawMessage) (Checkpoint, error) {
	var cp Checkpoint
	if len(raw) == 0 {
		return cp, fmt.Errorf("message has no structured checkpoint")
	}
	err := json.Unmarshal(raw, &cp)
	return cp, err
}
