// Package provider talks to LLM providers through their official SDKs.
package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

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
	// cacheKeys: requests carry prompt_cache_key (provider.promptCache is not "off") until a server refuses the
	// field; it is then left out for the life of the provider.
	cacheKeys atomic.Bool
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
	o := &OpenAI{client: openai.NewClient(append(opts, extra...)...), model: p.Model}
	o.cacheKeys.Store(p.PromptCache != "off")
	return o, nil
}

// cacheKey is the prompt_cache_key to send for key: none when caching is off, key is empty, or the server
// refused the field.
func (o *OpenAI) cacheKey(key string) string {
	if !o.cacheKeys.Load() {
		return ""
	}
	return key
}

// refusedCacheKey reports whether err is a server refusing prompt_cache_key (a strict OpenAI-compatible server
// that does not know it): the field is then left out of every later request.
func (o *OpenAI) refusedCacheKey(err error) bool {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == 400 && strings.Contains(apiErr.Message+apiErr.RawJSON(), "prompt_cache_key") {
		o.cacheKeys.Store(false)
		return true
	}
	return false
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
		Usage: transcript.Usage{PromptTokens: int(resp.Usage.PromptTokens), CompletionTokens: int(resp.Usage.CompletionTokens),
			CachedTokens: int(resp.Usage.PromptTokensDetails.CachedTokens)},
	}, nil
}

// sdkError marks an error the SDK returned (not one of this package's sentences): describe words it once
// the caller has looked at it (a refused prompt_cache_key is retried).
type sdkError struct{ err error }

func (e sdkError) Error() string { return e.err.Error() }
func (e sdkError) Unwrap() error { return e.err }

// described is err for the user: an SDK error described, this package's own sentences as they are.
func described(err error) error {
	var se sdkError
	if errors.As(err, &se) {
		return describe(se.err)
	}
	return err
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
		raw := apiErr.RawJSON()
		msg := apiErr.Message
		if raw == "" { // not {"error": …}: vLLM's {"object": "error", "message": …}, or a proxy's page
			raw = responseBody(apiErr.Response)
			msg = topLevelMessage(raw)
		}
		if msg == "" {
			msg = clip(strings.TrimSpace(raw), maxErrorWords)
		}
		code, typ := errorFields(raw)
		if e, ok := overflow(apiErr.StatusCode, code, typ, msg, raw); ok {
			return e
		}
		return fmt.Errorf("provider returned HTTP %d: %s", apiErr.StatusCode, msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("provider timed out: %w", err)
	}
	return fmt.Errorf("provider request failed: %w", err)
}
