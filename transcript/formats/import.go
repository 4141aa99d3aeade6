// Package formats reads and writes transcripts in the OpenAI Chat Completions and Anthropic Messages shapes
// (a whole document, a bare array, or JSON Lines one message a line; Claude Code session logs too).
package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
// calls of SPEC U1. Nothing is returned on error.
func Import(data []byte, format Format) (Imported, error) {
	var out Imported
	records, system, trajectory, err := split(data)
	if err != nil {
		return out, err
	}
	if format == Auto {
		format = detect(records)
	}
	out.Format = format
	if system != "" {
		out.Instructions = append(out.Instructions, system)
	}
	var msgs []transcript.Message
	v := validator{calls: map[string]bool{}, open: map[string]bool{}}
	lastAnthropicID := ""
	for _, r := range records {
		var probe struct {
			Role        string          `json:"role"`
			Type        string          `json:"type"`
			Message     json.RawMessage `json:"message"`
			IsSidechain bool            `json:"isSidechain"`
		}
		if err := json.Unmarshal(r.raw, &probe); err != nil {
			return Imported{}, &Error{r.where, "not a JSON object: " + err.Error()}
		}
		raw := r.raw
		if probe.Role == "" && len(probe.Message) == 0 && probe.Type != "" && format != OpenAI {
			// A Claude Code bookkeeping record (summary, file-history-snapshot, …): no message in it.
			out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %s record", r.where, probe.Type))
			continue
		}
		if probe.Role == "" && len(probe.Message) > 0 {
			// A Claude Code log record: keep the main conversation's user and assistant messages.
			if probe.IsSidechain || (probe.Type != "user" && probe.Type != "assistant") {
				out.Skipped = append(out.Skipped, fmt.Sprintf("%s: %s record", r.where, describeRecord(probe.Type, probe.IsSidechain)))
				continue
			}
			raw = probe.Message
		} else if probe.Role == "exit" && trajectory {
			out.Skipped = append(out.Skipped, r.where+": the trajectory's exit record (the run's final output, not a message)")
			continue
		}
		var got []transcript.Message
		var err error
		if format == Anthropic {
			var id string
			got, id, err = anthropicMessage(raw)
			if err == nil && id != "" && id == lastAnthropicID && len(got) > 0 && len(msgs) > 0 && msgs[len(msgs)-1].Role == transcript.RoleAssistant {
				if err := v.check(&got[0]); err != nil {
					return Imported{}, &Error{r.where, err.Error()}
				}
				mergeAssistant(&msgs[len(msgs)-1], got[0])
				got = got[1:]
			}
			lastAnthropicID = id
		} else {
			got, err = openAIMessage(raw)
		}
		if err != nil {
			return Imported{}, &Error{r.where, err.Error()}
		}
		for _, m := range got {
			if err := v.check(&m); err != nil {
				return Imported{}, &Error{r.where, err.Error()}
			}
			if m.Role == transcript.RoleSystem && len(msgs) == 0 {
				out.Instructions = append(out.Instructions, m.Text)
				continue
			}
			msgs = append(msgs, m)
		}
	}
	for i := range msgs {
		msgs[i].Measure()
	}
	out.Messages = msgs
	return out, nil
}

func describeRecord(typ string, sidechain bool) string {
	if sidechain {
		return "sub-agent (sidechain) " + typ
	}
	return typ
}

// split cuts data into records: a {"messages":[…]} document, a bare array, or JSON Lines.
func split(data []byte) (records []record, system string, trajectory bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, "", false, &Error{"input", "empty file: expected a transcript"}
	}
	var whole any
	wholeErr := json.Unmarshal(trimmed, &whole)
	if wholeErr == nil {
		switch trimmed[0] {
		case '[':
			return arrayRecords(trimmed, "message ")
		case '{':
			var doc struct {
				Messages         json.RawMessage `json:"messages"`
				History          json.RawMessage `json:"history"`
				System           json.RawMessage `json:"system"`
				TrajectoryFormat string          `json:"trajectory_format"`
				Role             string          `json:"role"`
				Message          json.RawMessage `json:"message"`
			}
			_ = json.Unmarshal(trimmed, &doc)
			if len(doc.Messages) == 0 && len(doc.History) > 0 {
				// A SWE-agent trajectory: its model conversation is "history".
				doc.Messages = doc.History
			}
			if len(doc.Messages) > 0 {
				records, _, _, err = arrayRecords(doc.Messages, "messages[")
				if err != nil {
					return nil, "", false, err
				}
				system, err = systemText(doc.System)
				return records, system, strings.HasPrefix(doc.TrajectoryFormat, "mini-swe-agent"), err
			}
			if doc.Role != "" || len(doc.Message) > 0 {
				return []record{{"line 1", trimmed}}, "", false, nil
			}
			return nil, "", false, &Error{"input", `a JSON object without "messages": expected {"messages":[...]}, an array of messages, or JSON Lines`}
		}
		return nil, "", false, &Error{"input", "expected a JSON object, an array or JSON Lines"}
	}
	// JSON Lines if the first line stands alone; otherwise one broken document.
	first, _, _ := bytes.Cut(trimmed, []byte("\n"))
	if !json.Valid(bytes.TrimSpace(first)) {
		return nil, "", false, &Error{locate(trimmed, wholeErr), "invalid JSON: " + wholeErr.Error()}
	}
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		where := fmt.Sprintf("line %d", i+1)
		if !json.Valid(l) {
			var v any
			return nil, "", false, &Error{where, "invalid JSON: " + json.Unmarshal(l, &v).Error()}
		}
		if l[0] != '{' {
			return nil, "", false, &Error{where, "expected a JSON object (one message a line)"}
		}
		records = append(records, record{where, l})
	}
	return records, "", false, nil
}

func arrayRecords(raw json.RawMessage, label string) ([]record, string, bool, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, "", false, &Error{"messages", "expected an array of messages: " + err.Error()}
	}
	records := make([]record, len(items))
	for i, it := range items {
		where := fmt.Sprintf("%s%d", label, i)
		if strings.HasSuffix(label, "[") {
			where += "]"
		}
		records[i] = record{where, it}
	}
	return records, "", false, nil
}

// locate turns a JSON syntax error offset into "line L, column C".
func locate(data []byte, err error) string {
	se, ok := err.(*json.SyntaxError)
	if !ok {
		return "input"
	}
	before := data[:min(int(se.Offset), len(data))]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// detect picks Anthropic when a record uses its content blocks or wraps a Claude Code message, OpenAI otherwise.
func detect(records []record) Format {
	for _, r := range records {
		var probe struct {
			Role       string            `json:"role"`
			ToolCalls  json.RawMessage   `json:"tool_calls"`
			ToolCallID string            `json:"tool_call_id"`
			Message    json.RawMessage   `json:"message"`
			Content    []json.RawMessage `json:"content"`
		}
		if json.Unmarshal(r.raw, &probe) != nil {
			continue
		}
		if probe.Role == "" && len(probe.Message) > 0 {
			return Anthropic
		}
		if len(probe.ToolCalls) > 0 || probe.ToolCallID != "" || probe.Role == "tool" {
			return OpenAI
		}
		for _, c := range probe.Content {
			var b struct{ Type string }
			if json.Unmarshal(c, &b) == nil {
				switch b.Type {
				case "tool_use", "tool_result", "thinking", "redacted_thinking":
					return Anthropic
				}
			}
		}
	}
	return OpenAI
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
