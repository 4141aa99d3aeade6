package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// kindResponsesItem is the provider item holding an opaque Responses API output item (encrypted reasoning),
// replayed byte-exact while its message is kept (RM1).
const kindResponsesItem = "openai.responses.item"

// Responses is the OpenAI Responses API mode (provider.responses: true). Requests are streamed and stateless
// (store: false) and ask for encrypted reasoning, which is kept on the assistant message and sent back
// unchanged.
type Responses struct{ *OpenAI }

// responsesRequest is the body of POST /responses, built by hand so that opaque items stay byte-exact.
type responsesRequest struct {
	Model           string            `json:"model"`
	Instructions    string            `json:"instructions,omitempty"`
	Input           []json.RawMessage `json:"input"`
	Tools           []map[string]any  `json:"tools,omitempty"`
	MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
	Store           bool              `json:"store"`
	Include         []string          `json:"include,omitempty"`
	Text            map[string]any    `json:"text,omitempty"`
	Stream          bool              `json:"stream"`
	PromptCacheKey  string            `json:"prompt_cache_key,omitempty"`
	ToolChoice      string            `json:"tool_choice,omitempty"`
}

type responsesReply struct {
	Status            string                   `json:"status"`
	IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
	Output            []json.RawMessage        `json:"output"`
	Usage             struct {
		InputTokens        int `json:"input_tokens"`
		OutputTokens       int `json:"output_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
	} `json:"usage"`
}

// call streams one request: text and reasoning-summary deltas go to onDelta (may be nil); the completed
// response is decoded from its raw JSON so that opaque items stay byte-exact. A server that refuses
// prompt_cache_key gets the request again without it.
func (r Responses) call(ctx context.Context, body responsesRequest, setting string, onDelta func(Delta)) (Reply, error) {
	body.PromptCacheKey = r.cacheKey(body.PromptCacheKey)
	rep, err := r.callOnce(ctx, body, setting, onDelta)
	if err != nil && body.PromptCacheKey != "" && r.refusedCacheKey(err) {
		body.PromptCacheKey = ""
		rep, err = r.callOnce(ctx, body, setting, onDelta)
	}
	if err != nil {
		return Reply{}, described(err)
	}
	return rep, nil
}

// callOnce is one streamed call; its SDK errors come as sdkError.
func (r Responses) callOnce(ctx context.Context, body responsesRequest, setting string, onDelta func(Delta)) (Reply, error) {
	body.Model, body.Store, body.Stream = r.model, false, true
	raw, err := json.Marshal(body)
	if err != nil {
		return Reply{}, fmt.Errorf("encoding the request: %w", err)
	}
	stream := r.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{}, option.WithRequestBody("application/json", raw),
		option.WithMiddleware(limitReply(body.MaxOutputTokens, setting)))
	defer stream.Close()
	var final json.RawMessage
	for stream.Next() {
		ev := stream.Current()
		switch ev.Type {
		case "response.output_text.delta":
			if onDelta != nil {
				onDelta(Delta{Text: ev.Delta})
			}
		case "response.reasoning_summary_text.delta":
			if onDelta != nil {
				onDelta(Delta{Reasoning: ev.Delta})
			}
		case "response.completed", "response.incomplete":
			final = json.RawMessage(ev.JSON.Response.Raw())
		case "response.failed", "error":
			msg := ev.Message
			if msg == "" {
				msg = ev.JSON.Response.Raw()
			}
			return Reply{}, fmt.Errorf("the provider failed the response: %s", msg)
		}
	}
	if err := stream.Err(); err != nil {
		return Reply{}, sdkError{err}
	}
	if final == nil {
		return Reply{}, errors.New("the provider's stream was cut before the response completed; nothing of it was kept")
	}
	var out responsesReply
	if err := json.Unmarshal(final, &out); err != nil {
		return Reply{}, fmt.Errorf("the provider returned an unreadable response: %w", err)
	}
	msg := transcript.Message{Role: transcript.RoleAssistant}
	var texts []string
	for _, raw := range out.Output {
		var item struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
		}
		if err := json.Unmarshal(raw, &item); err != nil {
			return Reply{}, fmt.Errorf("the provider returned an unreadable output item: %w", err)
		}
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" {
					texts = append(texts, c.Text)
				}
			}
		case "function_call":
			if item.CallID == "" || item.Name == "" {
				return Reply{}, errors.New("the provider returned a function call without a call_id or a name")
			}
			msg.ToolCalls = append(msg.ToolCalls, transcript.ToolCall{ID: item.CallID, Name: item.Name, Arguments: item.Arguments})
		case "reasoning":
			for _, s := range item.Summary {
				msg.Reasoning += s.Text
			}
			msg.Items = append(msg.Items, transcript.ProviderItem{Kind: kindResponsesItem, Data: append(json.RawMessage(nil), raw...)})
		}
	}
	msg.Text = strings.Join(texts, "\n")
	usage := transcript.Usage{PromptTokens: out.Usage.InputTokens, CompletionTokens: out.Usage.OutputTokens,
		CachedTokens: out.Usage.InputTokensDetails.CachedTokens}
	if usage.PromptTokens > 0 {
		msg.Usage = &usage
	}
	finish := "stop"
	switch {
	case out.Status == "incomplete" && out.IncompleteDetails != nil && out.IncompleteDetails.Reason == "max_output_tokens":
		finish = "length"
	case len(msg.ToolCalls) > 0:
		finish = "tool_calls"
	}
	return Reply{Message: msg, FinishReason: finish, Usage: usage}, nil
}

// Complete implements Chat.
func (r Responses) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	body := responsesRequest{Instructions: req.System, Input: responsesInput(req.Messages), MaxOutputTokens: req.MaxOutputTokens,
		Include: []string{"reasoning.encrypted_content"}, PromptCacheKey: req.CacheKey}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, map[string]any{"type": "function", "name": t.Name, "description": t.Description, "parameters": t.Parameters})
	}
	if req.NoToolUse && len(body.Tools) > 0 {
		body.ToolChoice = "none"
	}
	return r.call(ctx, body, "limits.maxOutputTokens", onDelta)
}

// Summarize implements compaction.Summarizer with a structured-output Responses call.
func (r Responses) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	prompt, _ := json.Marshal(map[string]any{"role": "user", "content": req.Prompt})
	rep, err := r.call(ctx, responsesRequest{Instructions: req.System, Input: []json.RawMessage{prompt}, MaxOutputTokens: req.MaxOutputTokens,
		Text: map[string]any{"format": map[string]any{"type": "json_schema", "name": "checkpoint", "schema": req.Schema, "strict": true}}}, "compaction.maxOutputTokens", nil)
	if err != nil {
		return compaction.SummaryReply{}, err
	}
	return compaction.SummaryReply{Text: rep.Message.Text, Truncated: rep.FinishReason == "length", Usage: rep.Usage}, nil
}

// responsesInput converts the transcript into input items: opaque items first and byte-exact, then the
// message, its function calls, and function_call_output items for results.
func responsesInput(msgs []transcript.Message) []json.RawMessage {
	var out []json.RawMessage
	add := func(v any) {
		b, _ := json.Marshal(v)
		out = append(out, b)
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case transcript.RoleTool:
			add(map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Text})
		case transcript.RoleAssistant:
			for _, it := range m.Items {
				if it.Kind == kindResponsesItem {
					out = append(out, it.Data)
				}
			}
			if m.Text != "" {
				add(map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": m.Text}}})
			}
			for _, c := range m.ToolCalls {
				add(map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments})
			}
		default:
			role := "user"
			if m.Role == transcript.RoleSystem {
				role = "developer"
			}
			add(map[string]any{"role": role, "content": m.Text})
		}
	}
	return out
}
