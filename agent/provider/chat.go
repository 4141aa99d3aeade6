package provider

import (
	"context"
	"encoding/json"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ToolSpec describes one tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call of the agent loop.
type Request struct {
	// System is the instructions sent with every request.
	System   string
	Messages []transcript.Message
	Tools    []ToolSpec
	// MaxOutputTokens is limits.maxOutputTokens.
	MaxOutputTokens int
	// CacheKey groups requests that share a prefix (the session ID) for the provider's prompt cache: OpenAI's
	// prompt_cache_key. Empty: none sent.
	CacheKey string
}

// Reply is the model's answer: an assistant message (text, reasoning, tool calls, opaque items).
type Reply struct {
	Message      transcript.Message
	FinishReason string
	Usage        transcript.Usage
}

// Delta is a piece of a streamed reply, for progress display.
type Delta struct {
	Text      string
	Reasoning string
}

// Chat is a model the agent loop talks to.
type Chat interface {
	// Complete sends req and returns the whole reply; onDelta (may be nil) sees the reply as it streams.
	Complete(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error)
}
