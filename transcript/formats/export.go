package formats

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Export writes instructions and msgs to w as {"messages":[...]} in format (Anthropic adds "system"). With
// audit set, every message carries an "alisio" field with its ID and its summary/compacted/truncated flags,
// and messages are never merged.
func Export(w io.Writer, instructions []string, msgs []transcript.Message, format Format, audit bool) error {
	var doc any
	switch format {
	case OpenAI:
		out := make([]openAIMsg, 0, len(instructions)+len(msgs))
		for _, in := range instructions {
			out = append(out, openAIMsg{Role: "system", Content: jsonString(in)})
		}
		for i := range msgs {
			out = append(out, toOpenAI(&msgs[i], audit))
		}
		doc = struct {
			Messages []openAIMsg `json:"messages"`
		}{out}
	case Anthropic:
		out := make([]anthropicMsg, 0, len(msgs))
		for i := range msgs {
			m := toAnthropic(&msgs[i], audit)
			if n := len(out); !audit && n > 0 && msgs[i].Role == transcript.RoleTool && msgs[i-1].Role == transcript.RoleTool {
				out[n-1].Content = appendBlocks(out[n-1].Content, m.Content)
				continue
			}
			out = append(out, m)
		}
		doc = struct {
			System   string         `json:"system,omitempty"`
			Messages []anthropicMsg `json:"messages"`
		}{strings.Join(instructions, "\n\n"), out}
	default:
		return fmt.Errorf("unknown export format %q", format)
	}
	// Compact output: indenting would reformat raw tool inputs.
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing transcript: %w", err)
	}
	return nil
}

// marshal encodes v without escaping <, > and & (tool inputs and outputs are full of them).
func marshal(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func jsonString(s string) json.RawMessage { return marshal(s) }

func meta(m *transcript.Message, audit bool) *alisioMeta {
	if !audit {
		return nil
	}
	return &alisioMeta{ID: m.ID, Summary: m.Summary, Partial: m.Partial, Compacted: m.Compacted, Truncated: m.Truncated,
		OriginalID: m.OriginalID, CreatedAt: m.CreatedAt.Format(time.RFC3339Nano)}
}

func toOpenAI(m *transcript.Message, audit bool) openAIMsg {
	out := openAIMsg{Role: string(m.Role), ToolCallID: m.ToolCallID, ReasoningContent: m.Reasoning, Alisio: meta(m, audit)}
	if m.Role == transcript.RoleTool {
		out.Name = m.ToolName
	}
	var parts []json.RawMessage
	for _, it := range m.Items {
		if it.Kind == kindOpenAIPart {
			parts = append(parts, it.Data)
		}
	}
	switch {
	case len(parts) > 0:
		blocks := append([]json.RawMessage{}, parts...)
		if m.Text != "" {
			tb := marshal(map[string]string{"type": "text", "text": m.Text})
			blocks = append([]json.RawMessage{tb}, blocks...)
		}
		out.Content = marshal(blocks)
	case m.Text != "" || len(m.ToolCalls) == 0:
		out.Content = jsonString(m.Text)
	default:
		out.Content = json.RawMessage("null")
	}
	for _, c := range m.ToolCalls {
		tc := openAIToolCall{ID: c.ID, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	return out
}

func toAnthropic(m *transcript.Message, audit bool) anthropicMsg {
	out := anthropicMsg{Role: string(m.Role), Alisio: meta(m, audit)}
	var blocks []any
	switch m.Role {
	case transcript.RoleTool:
		out.Role = "user"
		blocks = append(blocks, anthropicBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: jsonString(m.Text), IsError: m.IsError})
	case transcript.RoleSystem:
		out.Role = "user"
		blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Text})
	default:
		if thinking, _ := m.ThinkingBlocks(); len(thinking) > 0 {
			for _, b := range thinking {
				blocks = append(blocks, b)
			}
		} else if m.Reasoning != "" {
			blocks = append(blocks, transcript.ThinkingBlock{Type: "thinking", Thinking: m.Reasoning})
		}
		if m.Text != "" {
			blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Text})
		}
		for _, it := range m.Items {
			if it.Kind == kindAnthropicBlock {
				blocks = append(blocks, it.Data)
			}
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: c.InputObject()})
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, anthropicBlock{Type: "text", Text: ""})
	}
	out.Content = marshal(blocks)
	return out
}

func appendBlocks(a, b json.RawMessage) json.RawMessage {
	var x, y []json.RawMessage
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	return marshal(append(x, y...))
}
