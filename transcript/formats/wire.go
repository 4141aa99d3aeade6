package formats

import (
	"encoding/json"
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Provider item kinds that carry content of one format through a round trip.
const (
	kindOpenAIPart     = "openai.content_part"
	kindAnthropicBlock = "anthropic.block"
)

type openAIToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type openAIMsg struct {
	Role       string           `json:"role"`
	Content    json.RawMessage  `json:"content,omitempty"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	// ToolCallIDs is SWE-agent's spelling of a tool message's call ID (a one-element list); read only.
	ToolCallIDs      []string    `json:"tool_call_ids,omitempty"`
	Name             string      `json:"name,omitempty"`
	ReasoningContent string      `json:"reasoning_content,omitempty"`
	Alisio           *alisioMeta `json:"alisio,omitempty"`
}

// alisioMeta is the per-message audit record that export --all adds.
type alisioMeta struct {
	ID         string `json:"id"`
	Summary    bool   `json:"summary,omitempty"`
	Partial    bool   `json:"partial,omitempty"`
	Compacted  bool   `json:"compacted,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	OriginalID string `json:"originalId,omitempty"`
	CreatedAt  string `json:"createdAt,omitempty"`
}

func openAIMessage(raw json.RawMessage) ([]transcript.Message, error) {
	var in openAIMsg
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("not an OpenAI chat message: %s", jsonProblem(err))
	}
	return in.messages()
}

// messages converts a decoded OpenAI message.
func (in *openAIMsg) messages() ([]transcript.Message, error) {
	m := transcript.Message{Role: transcript.Role(in.Role), ToolCallID: in.ToolCallID, Reasoning: in.ReasoningContent}
	if !m.Role.Valid() {
		return nil, fmt.Errorf("unknown role %q (allowed: system, user, assistant, tool)", in.Role)
	}
	if m.ToolCallID == "" && len(in.ToolCallIDs) > 0 {
		if len(in.ToolCallIDs) > 1 {
			return nil, fmt.Errorf("a tool message answers %d calls (tool_call_ids); one result a call is expected", len(in.ToolCallIDs))
		}
		m.ToolCallID = in.ToolCallIDs[0]
	}
	if m.Role == transcript.RoleTool {
		m.ToolName = in.Name
	}
	text, other, err := textOf(in.Content)
	if err != nil {
		return nil, err
	}
	m.Text = text
	for _, o := range other {
		m.Items = append(m.Items, transcript.ProviderItem{Kind: kindOpenAIPart, Data: o})
	}
	for _, c := range in.ToolCalls {
		if c.Function.Name == "" {
			return nil, fmt.Errorf("tool call %q has no function name", c.ID)
		}
		m.ToolCalls = append(m.ToolCalls, transcript.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return []transcript.Message{m}, nil
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type anthropicMsg struct {
	ID      string          `json:"id,omitempty"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Alisio  *alisioMeta     `json:"alisio,omitempty"`
}

// anthropicMessage converts one Anthropic message into transcript messages: tool_result blocks become tool
// messages (before any text of the same user message); it also returns the message's API ID, if any.
func anthropicMessage(raw json.RawMessage) ([]transcript.Message, string, error) {
	var in anthropicMsg
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, "", fmt.Errorf("not an Anthropic message: %s", jsonProblem(err))
	}
	role := transcript.Role(in.Role)
	if role != transcript.RoleUser && role != transcript.RoleAssistant && role != transcript.RoleSystem {
		return nil, "", fmt.Errorf("unknown role %q (allowed in Anthropic messages: user, assistant)", in.Role)
	}
	main := transcript.Message{Role: role}
	if len(in.Content) > 0 && in.Content[0] == '"' {
		if err := json.Unmarshal(in.Content, &main.Text); err != nil {
			return nil, "", err
		}
		return []transcript.Message{main}, in.ID, nil
	}
	var blocks []json.RawMessage
	if err := json.Unmarshal(in.Content, &blocks); err != nil {
		return nil, "", fmt.Errorf("content must be a string or an array of blocks")
	}
	var out []transcript.Message
	for i, rb := range blocks {
		var b anthropicBlock
		if err := json.Unmarshal(rb, &b); err != nil {
			return nil, "", fmt.Errorf("content[%d] is not a block: %s", i, jsonProblem(err))
		}
		switch b.Type {
		case "text":
			main.Text = joinText(main.Text, b.Text)
		case "thinking", "redacted_thinking":
			// Each block is kept whole and in order: the API accepts signed blocks back only unchanged.
			main.Reasoning = joinText(main.Reasoning, b.Thinking)
			main.Items = append(main.Items, transcript.ThinkingItem(transcript.ThinkingBlock{}, rb))
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return nil, "", fmt.Errorf("content[%d]: tool_use needs an id and a name", i)
			}
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			main.ToolCalls = append(main.ToolCalls, transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		case "tool_result":
			text, other, err := textOf(b.Content)
			if err != nil {
				return nil, "", fmt.Errorf("content[%d]: %v", i, err)
			}
			res := transcript.Message{Role: transcript.RoleTool, ToolCallID: b.ToolUseID, Text: text, IsError: b.IsError}
			for _, o := range other {
				res.Items = append(res.Items, transcript.ProviderItem{Kind: kindAnthropicBlock, Data: o})
			}
			out = append(out, res)
		default:
			main.Items = append(main.Items, transcript.ProviderItem{Kind: kindAnthropicBlock, Data: rb})
		}
	}
	if main.Text != "" || main.Reasoning != "" || len(main.ToolCalls) > 0 || len(main.Items) > 0 || len(out) == 0 {
		out = append(out, main)
	}
	return out, in.ID, nil
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// mergeAssistant folds a later record of the same Anthropic message (Claude Code writes one record per block)
// into m.
func mergeAssistant(m *transcript.Message, next transcript.Message) {
	m.Text = joinText(m.Text, next.Text)
	m.Reasoning = joinText(m.Reasoning, next.Reasoning)
	m.ToolCalls = append(m.ToolCalls, next.ToolCalls...)
	m.Items = append(m.Items, next.Items...)
}
