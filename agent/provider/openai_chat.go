package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/shared"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Complete implements Chat with a streamed Chat Completions call: several tool calls per reply,
// reasoning_content where the server sends it, usage (cached tokens included) and the finish reason. A server
// that refuses prompt_cache_key gets the request again without it.
func (o *OpenAI) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	rep, err := o.complete(ctx, req, onDelta)
	if err != nil && o.cacheKey(req.CacheKey) != "" && o.refusedCacheKey(err) {
		return o.complete(ctx, req, onDelta)
	}
	if err != nil {
		return Reply{}, described(err)
	}
	return rep, nil
}

// complete is one streamed call; its SDK errors come as sdkError.
func (o *OpenAI) complete(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error) {
	params := openai.ChatCompletionNewParams{
		Model:         o.model,
		Messages:      chatMessages(req.System, req.Messages),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.MaxOutputTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxOutputTokens))
	}
	if key := o.cacheKey(req.CacheKey); key != "" {
		params.PromptCacheKey = openai.String(key)
	}
	if req.NoToolUse && len(req.Tools) > 0 {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return Reply{}, fmt.Errorf("tool %s: parameters schema: %w", t.Name, err)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: t.Name, Description: openai.String(t.Description), Parameters: shared.FunctionParameters(schema)}))
	}
	stream := o.client.Chat.Completions.NewStreaming(ctx, params, option.WithMiddleware(limitReply(req.MaxOutputTokens, "limits.maxOutputTokens")))
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	var reasoning strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			return Reply{}, errors.New("the provider's stream is inconsistent (chunks for different completions)")
		}
		for _, ch := range chunk.Choices {
			r := extraString(ch.Delta.JSON.ExtraFields, "reasoning_content")
			reasoning.WriteString(r)
			if onDelta != nil && (ch.Delta.Content != "" || r != "") {
				onDelta(Delta{Text: ch.Delta.Content, Reasoning: r})
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Reply{}, sdkError{err}
	}
	if len(acc.Choices) == 0 {
		return Reply{}, errors.New("the provider's stream ended without an answer (is provider.baseURL an OpenAI-compatible /v1 endpoint?)")
	}
	ch := acc.Choices[0]
	if ch.FinishReason == "" {
		return Reply{}, errors.New("the provider's stream was cut before the reply finished (no finish reason); nothing of it was kept")
	}
	msg := transcript.Message{Role: transcript.RoleAssistant, Text: ch.Message.Content, Reasoning: reasoning.String()}
	for _, tc := range ch.Message.ToolCalls {
		if tc.ID == "" || tc.Function.Name == "" {
			return Reply{}, fmt.Errorf("the provider's stream was cut in the middle of a tool call (finish reason %q)", ch.FinishReason)
		}
		msg.ToolCalls = append(msg.ToolCalls, transcript.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	usage := transcript.Usage{PromptTokens: int(acc.Usage.PromptTokens), CompletionTokens: int(acc.Usage.CompletionTokens),
		CachedTokens: int(acc.Usage.PromptTokensDetails.CachedTokens)}
	if usage.PromptTokens > 0 {
		msg.Usage = &usage
	}
	return Reply{Message: msg, FinishReason: ch.FinishReason, Usage: usage}, nil
}

func extraString(fields map[string]respjson.Field, key string) string {
	f, ok := fields[key]
	if !ok {
		return ""
	}
	var s string
	_ = json.Unmarshal([]byte(f.Raw()), &s)
	return s
}

// chatMessages converts the transcript to Chat Completions messages, byte-exact for call IDs and arguments.
func chatMessages(system string, msgs []transcript.Message) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for i := range msgs {
		m := &msgs[i]
		switch m.Role {
		case transcript.RoleSystem:
			out = append(out, openai.SystemMessage(m.Text))
		case transcript.RoleUser:
			out = append(out, openai.UserMessage(m.Text))
		case transcript.RoleTool:
			out = append(out, openai.ToolMessage(m.Text, m.ToolCallID))
		case transcript.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Text != "" {
				a.Content.OfString = openai.String(m.Text)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
			}
			if m.Reasoning != "" {
				a.SetExtraFields(map[string]any{"reasoning_content": m.Reasoning})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
	}
	return out
}
