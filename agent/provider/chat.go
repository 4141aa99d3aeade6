package provider

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/alisio-lsp/alisio-lsp/compaction"

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
	// NoToolUse asks for a reply without tool calls where that leaves the cached prefix as it is (OpenAI:
	// tool_choice "none"); Anthropic caches nothing of the messages past a tool_choice change, so its requests
	// keep theirs and the instructions say it.
	NoToolUse bool
}

// errSuffixToolCall: the model called a tool where a checkpoint was asked for.
var errSuffixToolCall = errors.New("the model called a tool instead of writing the checkpoint")

// SuffixSummary asks chat for req's checkpoint in the suffix form (compaction.SummaryRequest.Sent): the
// agent's own request — its instructions, tools and the span's messages, serialised as every turn sends them —
// with compaction.SuffixPrompt as a last user message, so that the provider reads everything before that
// message from its prompt cache. An error (a tool call among them) leaves the standalone request to the caller.
func SuffixSummary(ctx context.Context, chat Chat, req compaction.SummaryRequest, tools []ToolSpec) (compaction.SummaryReply, error) {
	msgs := append(slices.Clip(req.Sent), transcript.Message{Role: transcript.RoleUser, Text: compaction.SuffixPrompt(req)})
	rep, err := chat.Complete(ctx, Request{System: req.SentSystem, Messages: msgs, Tools: tools, MaxOutputTokens: req.MaxOutputTokens,
		CacheKey: req.Session, NoToolUse: true}, nil)
	if err != nil {
		return compaction.SummaryReply{}, err
	}
	if len(rep.Message.ToolCalls) > 0 {
		return compaction.SummaryReply{}, errSuffixToolCall
	}
	return compaction.SummaryReply{Text: rep.Message.Text, Truncated: rep.FinishReason == "length", Usage: rep.Usage}, nil
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
