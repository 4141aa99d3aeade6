package provider

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ContextOverflowError reports a request the provider refused as over the model's context window: its
// tokenizer counted more than the chars/4 estimate, or the window is smaller than the one configured.
// InputTokens and Window are the provider's own counts when its error gives them (0: not said).
type ContextOverflowError struct {
	InputTokens, Window int
	// Message is the provider's own words.
	Message string
}

// Error says what the provider refused, in its words.
func (e *ContextOverflowError) Error() string {
	return "the provider refused the request as over the model's context window: " + e.Message
}

// overflowPhrases are what the servers' messages say of a request over the window: OpenAI and vLLM ("maximum
// context length"), the Responses API ("exceeds the context window"), Anthropic ("prompt is too long",
// "exceed context limit") and llama.cpp ("exceeds the available context size").
var overflowPhrases = regexp.MustCompile(`(?i)maximum context length|context window|prompt is too long|exceed context limit|context size|too many tokens`)

// The counts the messages give: the input's tokens, then the window.
var (
	inputCounts = []*regexp.Regexp{
		regexp.MustCompile(`(\d+) in the messages`),             // OpenAI, vLLM: "you requested T tokens (I in the messages, M in the completion)"
		regexp.MustCompile(`messages resulted in (\d+) tokens`), // OpenAI
		regexp.MustCompile(`request has (\d+) input tokens`),    // vLLM
		regexp.MustCompile(`prompt is too long: (\d+) tokens`),  // Anthropic
		regexp.MustCompile(`exceed context limit: (\d+) \+`),    // Anthropic, with max_tokens
		regexp.MustCompile(`"n_prompt_tokens"\s*:\s*(\d+)`),     // llama.cpp's error fields
	}
	windowCounts = []*regexp.Regexp{
		regexp.MustCompile(`maximum context length is (\d+)`),
		regexp.MustCompile(`> (\d+) maximum`),
		regexp.MustCompile(`exceed context limit: \d+ \+ \d+ > (\d+)`),
		regexp.MustCompile(`"n_ctx"\s*:\s*(\d+)`),
	}
)

// overflow reads a refused request (its HTTP status, the error's code and type, its message and the raw body)
// as a context overflow when it is one.
func overflow(status int, code, typ, message, raw string) (*ContextOverflowError, bool) {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
		return nil, false
	}
	if code != "context_length_exceeded" && typ != "exceed_context_size_error" && !overflowPhrases.MatchString(message) {
		return nil, false
	}
	text := message + "\n" + raw
	return &ContextOverflowError{InputTokens: firstCount(inputCounts, text), Window: firstCount(windowCounts, text), Message: message}, true
}

func firstCount(patterns []*regexp.Regexp, text string) int {
	for _, p := range patterns {
		if m := p.FindStringSubmatch(text); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// errorFields are the code and type of an OpenAI-shaped error body ({"error": {"code", "type"}}); llama.cpp
// sends a number as the code.
func errorFields(raw string) (code, typ string) {
	var body struct {
		Error struct {
			Code json.RawMessage `json:"code"`
			Type string          `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil {
		code = strings.Trim(string(body.Error.Code), `"`)
	}
	return code, body.Error.Type
}

// maxErrorBody is the most of an error response's body read for its words, and maxErrorWords the most of a
// body without a message said in the error.
const (
	maxErrorBody  = 8 << 10
	maxErrorWords = 500
)

// clip is text cut to at most n bytes, at a character's start, with "…" when cut.
func clip(text string, n int) string {
	if len(text) <= n {
		return text
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + "…"
}

// responseBody is the start of the body of resp, an error response the SDK kept readable ("" when none).
func responseBody(resp *http.Response) string {
	if resp == nil || resp.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return string(b)
}

// topLevelMessage is the "message" of an error body that does not nest it under "error" ("" when none).
func topLevelMessage(raw string) string {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal([]byte(raw), &body)
	return body.Message
}
