package providertest

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
)

// CheckBudget reads back every agent request received (Chat Completions and Anthropic shapes; summarizer
// requests are left out, they carry history as data) and reports the first one whose instructions and
// transcript exceed limit characters (SPEC H1: a request over the hard limit is never sent).
func (s *Server) CheckBudget(limit int) error {
	for i, req := range s.Requests() {
		if _, summary := req["response_format"]; summary || req["messages"] == nil {
			continue
		}
		if tools, _ := req["tools"].([]any); len(tools) == 0 {
			continue
		}
		body, _ := json.Marshal(map[string]any{"system": req["system"], "messages": req["messages"]})
		format := formats.OpenAI
		if _, ok := req["system"]; ok {
			format = formats.Anthropic
		}
		im, err := formats.Import(body, format)
		if err != nil {
			return fmt.Errorf("request %d does not read back as a %s transcript: %w", i, format, err)
		}
		chars := transcript.TotalChars(im.Messages)
		for _, in := range im.Instructions {
			chars += utf8.RuneCountInString(in)
		}
		if chars > limit {
			return fmt.Errorf("request %d sent %d chars of instructions and transcript, over limits.maxContextChars %d", i, chars, limit)
		}
	}
	return nil
}

// CheckSummaryWindow reports the first summarizer request whose prompt (about 4 chars a token) plus its
// output budget does not fit window tokens: a model refuses such a request, or cuts the checkpoint.
func (s *Server) CheckSummaryWindow(window int) error {
	for i, req := range s.Requests() {
		if _, summary := req["response_format"]; !summary {
			continue
		}
		chars := 0
		msgs, _ := req["messages"].([]any)
		for _, m := range msgs {
			mm, _ := m.(map[string]any)
			text, _ := mm["content"].(string)
			chars += utf8.RuneCountInString(text)
		}
		out, _ := req["max_completion_tokens"].(float64)
		if out == 0 {
			out, _ = req["max_tokens"].(float64)
		}
		if need := transcript.EstimateTokens(chars) + int(out); need > window {
			return fmt.Errorf("summarizer request %d needs about %d tokens (%d chars of prompt, %d of output) in a %d-token window", i, need, chars, int(out), window)
		}
	}
	return nil
}
