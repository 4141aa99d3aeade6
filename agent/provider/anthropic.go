package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Anthropic is the Anthropic Messages provider. It implements Chat and compaction.Summarizer.
type Anthropic struct {
	client anthropic.Client
	model  string
	// thinkingBudget enables extended thinking with that many tokens (0: off).
	thinkingBudget int
	// promptCache is provider.promptCache: "5m" or "" (breakpoints that live 5 minutes), "1h", or "off".
	promptCache string
}

// NewAnthropic builds the provider; the API key comes from the variable provider.apiKeyEnv names (default
// ANTHROPIC_API_KEY).
func NewAnthropic(p config.Provider, extra ...option.RequestOption) (*Anthropic, error) {
	key, err := apiKey(p, "ANTHROPIC_API_KEY", "claude-sonnet-4-5")
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithRequestTimeout(requestTimeout)}
	if p.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(p.BaseURL))
	}
	return &Anthropic{client: anthropic.NewClient(append(opts, extra...)...), model: p.Model, thinkingBudget: p.ThinkingBudget, promptCache: p.PromptCache}, nil
}

// Complete implements Chat with a streamed Messages call.
func (a *Anthropic) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	params := anthropic.MessageNewParams{Model: anthropic.Model(a.model), MaxTokens: int64(max(req.MaxOutputTokens, 1)),
		Messages: anthropicMessages(req.Messages)}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	if a.thinkingBudget > 0 {
		// The budget is part of max_tokens, so the reply keeps its own limits.maxOutputTokens on top of it.
		params.Thinking = anthropic.ThinkingConfigParamOfEnabled(int64(a.thinkingBudget))
		params.MaxTokens += int64(a.thinkingBudget)
	}
	for _, t := range req.Tools {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return Reply{}, fmt.Errorf("tool %s: parameters schema: %w", t.Name, err)
		}
		tool := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}, t.Name)
		tool.OfTool.Description = anthropic.String(t.Description)
		params.Tools = append(params.Tools, tool)
	}
	if a.promptCache != "off" {
		markCacheBreakpoints(&params, a.promptCache == "1h")
	}
	stream := a.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(limitReply(int(params.MaxTokens), "limits.maxOutputTokens")))
	defer stream.Close()
	var msg anthropic.Message
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return Reply{}, fmt.Errorf("the provider's stream is inconsistent: %w", err)
		}
		if onDelta != nil && ev.Type == "content_block_delta" {
			switch ev.Delta.Type {
			case "text_delta":
				onDelta(Delta{Text: ev.Delta.Text})
			case "thinking_delta":
				onDelta(Delta{Reasoning: ev.Delta.Thinking})
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Reply{}, describeAnthropic(err)
	}
	if msg.StopReason == "" {
		return Reply{}, errors.New("the provider's stream was cut before the reply finished (no stop reason); nothing of it was kept")
	}
	return anthropicReply(&msg)
}

func anthropicReply(msg *anthropic.Message) (Reply, error) {
	out := transcript.Message{Role: transcript.RoleAssistant}
	var texts []string
	var blocks []transcript.ThinkingBlock
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "thinking", "redacted_thinking":
			// Each block is kept as received, signature or encrypted data included, to be replayed unchanged.
			blocks = append(blocks, transcript.ThinkingBlock{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature, Data: b.Data})
			out.Items = append(out.Items, transcript.ThinkingItem(blocks[len(blocks)-1], nil))
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return Reply{}, errors.New("the provider's reply has a tool call without an ID or a name")
			}
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			out.ToolCalls = append(out.ToolCalls, transcript.ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	out.Text = strings.Join(texts, "\n")
	out.Reasoning = transcript.ReasoningOf(blocks)
	usage := transcript.Usage{PromptTokens: int(msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens),
		CompletionTokens: int(msg.Usage.OutputTokens), CachedTokens: int(msg.Usage.CacheReadInputTokens),
		CacheWriteTokens: int(msg.Usage.CacheCreationInputTokens)}
	if usage.PromptTokens > 0 {
		out.Usage = &usage
	}
	finish := map[anthropic.StopReason]string{"max_tokens": "length", "tool_use": "tool_calls", "end_turn": "stop"}[msg.StopReason]
	if finish == "" {
		finish = string(msg.StopReason)
	}
	return Reply{Message: out, FinishReason: finish, Usage: usage}, nil
}

// markCacheBreakpoints puts Anthropic's prompt-cache breakpoints on params — the API caches only up to a
// breakpoint, and takes at most four: the end of the tools and the end of the instructions (which change
// least), the end of the last user turn (what the next request will read) and the end of the user turn before
// it (where the previous request put its last breakpoint, so that this request reads what that one wrote
// however many blocks the reply added). hour makes them live an hour instead of 5 minutes.
func markCacheBreakpoints(params *anthropic.MessageNewParams, hour bool) {
	cc := anthropic.NewCacheControlEphemeralParam()
	if hour {
		cc.TTL = anthropic.CacheControlEphemeralTTLTTL1h
	}
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	}
	marked := 0
	for i := len(params.Messages) - 1; i >= 0 && marked < 2; i-- {
		u := params.Messages[i].OfUser
		if u == nil || len(u.Content) == 0 {
			continue
		}
		if c := u.Content[len(u.Content)-1].GetCacheControl(); c != nil {
			*c = cc
			marked++
		}
	}
}

// anthropicMessages converts the transcript: tool results become tool_result blocks of a user message, and
// consecutive messages of one role are merged (the API wants user and assistant to alternate).
func anthropicMessages(msgs []transcript.Message) []anthropic.MessageParam {
	type turn struct {
		assistant bool
		blocks    []anthropic.ContentBlockParamUnion
	}
	var turns []turn
	add := func(assistant bool, blocks ...anthropic.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].assistant == assistant {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{assistant, blocks})
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case transcript.RoleTool:
			add(false, anthropic.NewToolResultBlock(m.ToolCallID, m.Text, m.IsError))
		case transcript.RoleAssistant:
			var blocks []anthropic.ContentBlockParamUnion
			thinking, _ := m.ThinkingBlocks()
			for _, b := range thinking {
				switch {
				case b.Type == "redacted_thinking":
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(b.Data))
				case b.Signature != "":
					blocks = append(blocks, anthropic.NewThinkingBlock(b.Signature, b.Thinking))
				}
			}
			if m.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Text))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, c.InputObject(), c.Name))
			}
			add(true, blocks...)
		default:
			text := m.Text
			if m.Role == transcript.RoleSystem {
				text = "[system] " + text
			}
			if text == "" {
				text = "(empty)"
			}
			add(false, anthropic.NewTextBlock(text))
		}
	}
	out := make([]anthropic.MessageParam, len(turns))
	for i, t := range turns {
		if t.assistant {
			out[i] = anthropic.NewAssistantMessage(t.blocks...)
		} else {
			out[i] = anthropic.NewUserMessage(t.blocks...)
		}
	}
	return out
}

// Summarize implements compaction.Summarizer with one Messages call that asks for the checkpoint schema as
// structured output; the schema is repeated in the instructions for compatible servers that ignore it.
func (a *Anthropic) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return compaction.SummaryReply{}, fmt.Errorf("checkpoint schema: %w", err)
	}
	system := req.System + "\n\nThe JSON object must match this JSON Schema:\n" + string(req.Schema)
	msg, err := a.client.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(a.model),
		MaxTokens: int64(max(req.MaxOutputTokens, 1)), System: []anthropic.TextBlockParam{{Text: system}},
		OutputConfig: anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}},
		Messages:     []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.Prompt))}},
		option.WithMiddleware(limitReply(req.MaxOutputTokens, "compaction.maxOutputTokens")))
	if err != nil {
		return compaction.SummaryReply{}, describeAnthropic(err)
	}
	r, err := anthropicReply(msg)
	if err != nil {
		return compaction.SummaryReply{}, err
	}
	return compaction.SummaryReply{Text: r.Message.Text, Truncated: r.FinishReason == "length", Usage: r.Usage}, nil
}

// ContextWindow reads the model's window from GET /v1/models/{model} when the server reports one.
func (a *Anthropic) ContextWindow(ctx context.Context) (int, error) {
	var raw json.RawMessage
	if err := a.client.Get(ctx, "v1/models", nil, &raw); err != nil {
		return 0, fmt.Errorf("listing models: %w", describeAnthropic(err))
	}
	return WindowFromModels(raw, a.model), nil
}

func describeAnthropic(err error) error {
	if e, ok := tooLarge(err); ok {
		return e
	}
	if e, ok := unreachable(err); ok {
		return e
	}
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(apiErr.RawJSON()), &body)
		msg := body.Error.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		if e, ok := overflow(apiErr.StatusCode, "", body.Error.Type, msg, apiErr.RawJSON()); ok {
			return e
		}
		return fmt.Errorf("provider returned HTTP %d: %s", apiErr.StatusCode, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("provider timed out: %w", err)
	}
	return fmt.Errorf("provider request failed: %w", err)
}
