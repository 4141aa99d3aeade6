// Package provider talks to LLM providers through their official SDKs.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// OpenAI is an OpenAI-compatible Chat Completions provider (OpenAI, Ollama, llama.cpp, vLLM, LM Studio,
// OpenRouter). It implements compaction.Summarizer.
type OpenAI struct {
	client openai.Client
	model  string
}

// NewOpenAI builds the provider from its settings. The API key is read from the environment variable the
// settings name (never from the settings themselves); extra options (an HTTP client, retries) are appended.
func NewOpenAI(p config.Provider, extra ...option.RequestOption) (*OpenAI, error) {
	key, err := apiKey(p, "", "gpt-4.1")
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{option.WithAPIKey(key), option.WithRequestTimeout(requestTimeout)}
	if p.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(p.BaseURL))
	}
	return &OpenAI{client: openai.NewClient(append(opts, extra...)...), model: p.Model}, nil
}

// Summarize implements compaction.Summarizer with one Chat Completions call that asks for the checkpoint
// schema as structured output.
func (o *OpenAI) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	var schema map[string]any
	if err := json.Unmarshal(req.Schema, &schema); err != nil {
		return compaction.SummaryReply{}, fmt.Errorf("checkpoint schema: %w", err)
	}
	params := openai.ChatCompletionNewParams{
		Model: o.model,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(req.System),
			openai.UserMessage(req.Prompt),
		},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "checkpoint", Schema: schema, Strict: openai.Bool(true)},
		}},
	}
	if req.MaxOutputTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxOutputTokens))
	}
	resp, err := o.client.Chat.Completions.New(ctx, params, option.WithMiddleware(limitReply(req.MaxOutputTokens, "compaction.maxOutputTokens")))
	if err != nil {
		return compaction.SummaryReply{}, describe(err)
	}
	if len(resp.Choices) == 0 {
		return compaction.SummaryReply{}, errors.New("the provider answered without any choice")
	}
	ch := resp.Choices[0]
	return compaction.SummaryReply{
		Text:      ch.Message.Content,
		Truncated: ch.FinishReason == "length",
		Usage:     transcript.Usage{PromptTokens: int(resp.Usage.PromptTokens), CompletionTokens: int(resp.Usage.CompletionTokens)},
	}, nil
}

// describe turns an SDK error into one the user can act on, keeping the provider's own message.
func describe(err error) error {
	if e, ok := tooLarge(err); ok {
		return e
	}
	if e, ok := unreachable(err); ok {
		return e
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = strings.TrimSpace(apiErr.RawJSON())
		}
		return fmt.Errorf("provider returned HTTP %d: %s", apiErr.StatusCode, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("provider timed out: %w", err)
	}
	return fmt.Errorf("provider request failed: %w", err)
}
