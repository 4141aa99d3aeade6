package transcript

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// KindAnthropicThinking is an Anthropic thinking or redacted_thinking block kept as received: its JSON object,
// signature or encrypted data included. The API accepts signed blocks back only unchanged, so each block is
// kept, replayed and dropped whole, never merged with another or cut.
const KindAnthropicThinking = "anthropic.thinking"

// KindThinkingSignature is the signature of the one thinking block that sessions stored before blocks were
// kept one by one; its text is the message's Reasoning. ThinkingBlocks turns it into a block.
const KindThinkingSignature = "anthropic.thinking_signature"

// ThinkingBlock is the decoded form of an Anthropic thinking or redacted_thinking block.
type ThinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// ThinkingItem wraps a block as a message item: raw, when given, is the block as read (kept with every field
// and value unchanged, whitespace compacted), else b is encoded.
func ThinkingItem(b ThinkingBlock, raw json.RawMessage) ProviderItem {
	var buf bytes.Buffer
	if len(raw) == 0 || json.Compact(&buf, raw) != nil {
		data, _ := json.Marshal(b)
		return ProviderItem{Kind: KindAnthropicThinking, Data: data}
	}
	return ProviderItem{Kind: KindAnthropicThinking, Data: buf.Bytes()}
}

// ThinkingBlocks returns m's Anthropic thinking blocks in the order received, with their positions in
// m.Items (-1 for a block rebuilt from an old single signature).
func (m *Message) ThinkingBlocks() (blocks []ThinkingBlock, at []int) {
	for i, it := range m.Items {
		switch it.Kind {
		case KindAnthropicThinking:
			var b ThinkingBlock
			if json.Unmarshal(it.Data, &b) == nil {
				blocks, at = append(blocks, b), append(at, i)
			}
		case KindThinkingSignature:
			var sig string
			if json.Unmarshal(it.Data, &sig) == nil && m.Reasoning != "" {
				blocks, at = append(blocks, ThinkingBlock{Type: "thinking", Thinking: m.Reasoning, Signature: sig}), append(at, i)
			}
		}
	}
	return blocks, at
}

// HasSignedReasoning reports whether m's Reasoning is the text of Anthropic thinking blocks, which must not be
// cut (DropThinking removes whole blocks instead).
func (m *Message) HasSignedReasoning() bool {
	for _, it := range m.Items {
		if it.Kind == KindAnthropicThinking || it.Kind == KindThinkingSignature {
			return true
		}
	}
	return false
}

// ReasoningOf joins the text of thinking blocks: a message's Reasoning when they are its only reasoning.
func ReasoningOf(blocks []ThinkingBlock) string {
	var texts []string
	for _, b := range blocks {
		if b.Thinking != "" {
			texts = append(texts, b.Thinking)
		}
	}
	return strings.Join(texts, "\n")
}

// DropThinking removes m's thinking blocks whole, oldest first, until at least excess chars are freed or none
// is left, and returns the new message and what is still in excess. Reasoning becomes the remaining blocks'
// text.
func DropThinking(m Message, excess int) (Message, int) {
	blocks, at := m.ThinkingBlocks()
	drop := map[int]bool{}
	n := 0
	for n < len(blocks) && excess > 0 {
		excess -= utf8.RuneCountInString(blocks[n].Thinking)
		drop[at[n]] = true
		n++
	}
	if n == 0 {
		return m, excess
	}
	items := make([]ProviderItem, 0, len(m.Items)-n)
	for i, it := range m.Items {
		if !drop[i] {
			items = append(items, it)
		}
	}
	m.Items = items
	m.Reasoning = ReasoningOf(blocks[n:])
	if len(m.Items) == 0 {
		m.Items = nil
	}
	m.Measure()
	return m, excess
}
