package provider

import (
	"context"
	"encoding/json"
	"fmt"
)

// windowKeys are the fields servers use for a model's context window, in order of preference.
var windowKeys = []string{"context_length", "max_model_len", "context_window", "max_context_length", "max_input_tokens", "n_ctx", "n_ctx_train"}

// ContextWindow asks the provider's model list (GET /models) for the model's context window in tokens. It
// returns 0 when the list does not say.
func (o *OpenAI) ContextWindow(ctx context.Context) (int, error) {
	var raw json.RawMessage
	if err := o.client.Get(ctx, "models", nil, &raw); err != nil {
		return 0, fmt.Errorf("listing models: %w", describe(err))
	}
	return WindowFromModels(raw, o.model), nil
}

// WindowFromModels reads the window of model from a /models response (OpenAI, OpenRouter, vLLM, LM Studio,
// llama.cpp shapes). When the model is not listed and there is one entry, that entry is used.
func WindowFromModels(raw json.RawMessage, model string) int {
	var doc struct {
		Data   []map[string]any `json:"data"`
		Models []map[string]any `json:"models"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return 0
	}
	entries := append(doc.Data, doc.Models...)
	var pick map[string]any
	for _, e := range entries {
		if e["id"] == model || e["name"] == model || e["model"] == model {
			pick = e
			break
		}
	}
	if pick == nil && len(doc.Data) == 1 {
		pick = doc.Data[0]
	}
	if pick == nil {
		return 0
	}
	return findWindow(pick, 0)
}

func findWindow(m map[string]any, depth int) int {
	for _, k := range windowKeys {
		if v, ok := m[k].(float64); ok && v > 0 {
			return int(v)
		}
	}
	if depth < 2 {
		for _, v := range m {
			if sub, ok := v.(map[string]any); ok {
				if w := findWindow(sub, depth+1); w > 0 {
					return w
				}
			}
		}
	}
	return 0
}
