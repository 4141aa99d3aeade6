package providertest

import (
	"fmt"
	"net/http"
)

// The APIs the server speaks, as overWindow words their refusals.
const (
	apiChat      = "chat"
	apiResponses = "responses"
	apiAnthropic = "anthropic"
)

// tokens is n chars (of a request as it arrived) in tokens of the script's tokenizer: CharsPerToken, else 4.
func (s *Server) tokens(n int) int {
	cpt := s.script.CharsPerToken
	if cpt <= 0 {
		cpt = 4
	}
	return int(float64(n) / cpt)
}

// contextLength is the first model's context_length (0: none).
func (s *Server) contextLength() int {
	for _, m := range s.script.Models {
		switch v := m["context_length"].(type) {
		case int:
			return v
		case float64:
			return int(v)
		}
	}
	return 0
}

// overWindow is the refusal each real API gives req when EnforceWindow is set and req does not fit the model's
// context_length, with its own status, error body and words: Chat Completions counts the input and the
// requested output (code context_length_exceeded, the counts in the message), the Responses API the input (no
// counts), Anthropic the input ("prompt is too long"), then the input and max_tokens. Status 0: it fits.
func (s *Server) overWindow(api string, req map[string]any) (int, map[string]any) {
	window := s.contextLength()
	if !s.script.EnforceWindow || window == 0 {
		return 0, nil
	}
	pieces := openAIPieces(req)
	if api == apiAnthropic {
		pieces = anthropicPieces(req)
	}
	input := s.tokens(charsOf(pieces))
	number := func(key string) int { n, _ := req[key].(float64); return int(n) }
	switch api {
	case apiChat:
		out := max(number("max_completion_tokens"), number("max_tokens"))
		if input+out <= window {
			return 0, nil
		}
		return http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
			"message": fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
				window, input+out, input, out)}}
	case apiResponses:
		if input <= window {
			return 0, nil
		}
		return http.StatusBadRequest, map[string]any{"error": map[string]any{"type": "invalid_request_error", "param": "input", "code": "context_length_exceeded",
			"message": "Your input exceeds the context window of this model. Please adjust your input and try again."}}
	default:
		out := number("max_tokens")
		var msg string
		switch {
		case input > window:
			msg = fmt.Sprintf("prompt is too long: %d tokens > %d maximum", input, window)
		case input+out > window:
			msg = fmt.Sprintf("input length and `max_tokens` exceed context limit: %d + %d > %d, decrease input length or `max_tokens` and try again", input, out, window)
		default:
			return 0, nil
		}
		return http.StatusBadRequest, map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	}
}
