// Package providertest is a local model server for tests and for trying alisio without an API key. It speaks
// the OpenAI Chat Completions wire format (streamed and not), answers from a script of replies (text, tool
// calls, length cut-offs, errors, delays, a stream cut mid-tool-call), serves GET /models, and checks every
// request as the real API does: a tool result must answer a call of the preceding assistant message, and
// every call must be answered before the conversation goes on.
package providertest

import (
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Script is what the server answers, in order.
type Script struct {
	Replies []Reply `json:"replies"`
	// Summaries answer the summarizer's requests (those asking for the "checkpoint" schema), in order; when
	// they run out, the server writes a checkpoint that quotes the user's messages.
	Summaries []Reply `json:"summaries,omitempty"`
	// Models is the /models list; empty gives one model "alisio-test" with no window.
	Models []map[string]any `json:"models,omitempty"`
	// Loop plays Replies again from the start when they run out, so that every prompt gets an answer.
	Loop bool `json:"loop,omitempty"`
	// NoCache reports no cached tokens, as servers without a prompt cache (llama.cpp, vLLM, Ollama) do; by
	// default usage reports them as each real API does (cache.go).
	NoCache bool `json:"noCache,omitempty"`
	// Strict refuses request fields it does not know with HTTP 400, prompt_cache_key among them, as a stricter
	// or older OpenAI-compatible server does.
	Strict bool `json:"strict,omitempty"`
	// SummaryDelayMs delays every summarizer reply (a slow summary).
	SummaryDelayMs int `json:"summaryDelayMs,omitempty"`
	// PaceMs waits that long after each piece of a reply's text it streams, so that a client is seen drawing
	// the reply as it is written (0: all at once).
	PaceMs int `json:"paceMs,omitempty"`
	// CharsPerToken is the server's tokenizer: a request of n chars (as it arrived) is n/CharsPerToken tokens,
	// in usage and against the window (0: 4). Code and JSON count nearer 3 at real APIs.
	CharsPerToken float64 `json:"charsPerToken,omitempty"`
	// EnforceWindow refuses a request that does not fit the first model's context_length, with each API's
	// own error (window.go); OverWindow counts the refusals.
	EnforceWindow bool `json:"enforceWindow,omitempty"`
}

// Reply is one scripted answer.
type Reply struct {
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	// Thinking are more signed thinking blocks after Reasoning's (Anthropic), and RedactedThinking the
	// payload of a redacted_thinking block placed after the first one.
	Thinking         []string   `json:"thinking,omitempty"`
	RedactedThinking string     `json:"redactedThinking,omitempty"`
	ToolCalls        []ToolCall `json:"toolCalls,omitempty"`
	// FinishReason defaults to "tool_calls" with calls, else "stop"; "length" simulates a cut.
	FinishReason string `json:"finishReason,omitempty"`
	// Status, with Error, answers an HTTP error (429, 500…) instead; RetryAfter sets the header.
	Status     int    `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`
	RetryAfter string `json:"retryAfter,omitempty"`
	// DelayMs waits before answering; Garbage answers a body that is not JSON; CutMidToolCall ends the stream
	// in the middle of the first tool call's arguments.
	DelayMs        int  `json:"delayMs,omitempty"`
	Garbage        bool `json:"garbage,omitempty"`
	CutMidToolCall bool `json:"cutMidToolCall,omitempty"`
	// FloodBytes streams that many bytes of text (into the first tool call's arguments when there are calls),
	// whatever max_tokens says: a provider that ignores the reply budget. Flooded counts what was written.
	FloodBytes int `json:"floodBytes,omitempty"`
	// PromptTokens is the input usage reported; 0 reports chars/4 of the request (tools, instructions and
	// messages as they arrived).
	PromptTokens int `json:"promptTokens,omitempty"`
}

// ToolCall is a scripted call.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Server serves a script. It is an http.Handler; Requests returns what it received.
type Server struct {
	mu       sync.Mutex
	script   Script
	requests []map[string]any
	// encrypted holds the encrypted reasoning contents this server issued (Responses mode).
	encrypted map[string]bool
	// Violations lists requests the real API would have rejected (and this server rejected with 400).
	violations []string
	// cancelled counts the requests whose client gave up while the reply was delayed.
	cancelled int
	// overWindowCount counts the requests refused as over the model's window (EnforceWindow).
	overWindowCount int
	// flooded counts the bytes of FloodBytes replies that were written to a client.
	flooded int64
	// replies is the whole script of replies, for Loop.
	replies []Reply
	// cache is what the prompt caches hold, for the cached tokens usage reports.
	cache promptCache
	// usages are the input usages reported, in order, for the requests answered.
	usages []RequestUsage
	// sleep waits between the pieces of a paced reply (time.Sleep; a test counts the waits instead).
	sleep func(time.Duration)
}

// RequestUsage is the input usage the server reported for one answered request, in tokens: all of it, the
// part read from the prompt cache and the part written to it; Summary marks a summarizer request.
type RequestUsage struct {
	Summary                bool
	Prompt, Cached, Writes int
}

// Usages returns the input usage reported for each answered request, in order.
func (s *Server) Usages() []RequestUsage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]RequestUsage(nil), s.usages...)
}

// Flooded is how many bytes of FloodBytes replies reached a client before it stopped reading.
func (s *Server) Flooded() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flooded
}

// New returns a server for script.
func New(script Script) *Server {
	return &Server{script: script, replies: append([]Reply(nil), script.Replies...), sleep: time.Sleep}
}

// textPieces are the pieces text is streamed in, each followed by the script's pace (PaceMs) once sent.
func (s *Server) textPieces(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, p := range pieces(text) {
			if !yield(p) {
				return
			}
			if s.script.PaceMs > 0 {
				s.sleep(time.Duration(s.script.PaceMs) * time.Millisecond)
			}
		}
	}
}

// Cancelled is how many requests their client cancelled while this server delayed the reply.
func (s *Server) Cancelled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// OverWindow is how many requests were refused as over the model's window (EnforceWindow).
func (s *Server) OverWindow() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overWindowCount
}

// Requests returns the decoded bodies of the chat requests received so far.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

// Violations returns the protocol violations seen (empty when every request was valid).
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// Remaining is the number of scripted replies not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Replies)
}

// ServeHTTP serves the model API: GET /models, POST /chat/completions, /messages and /responses.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1"), "/")
	switch {
	case r.Method == http.MethodGet && path == "/models":
		models := s.script.Models
		if len(models) == 0 {
			models = []map[string]any{{"id": "alisio-test", "object": "model", "owned_by": "alisio"}}
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": models})
	case r.Method == http.MethodPost && path == "/chat/completions":
		s.chat(w, r)
	case r.Method == http.MethodPost && path == "/messages":
		s.anthropic(w, r)
	case r.Method == http.MethodPost && path == "/responses":
		s.responses(w, r)
	case r.Method == http.MethodGet && path == "/alisio/requests":
		// What it received, for tests that drive it from another process (the editor tests).
		writeJSON(w, http.StatusOK, s.Requests())
	default:
		writeError(w, http.StatusNotFound, "unknown endpoint "+r.Method+" "+r.URL.Path)
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	var summary map[string]any
	if isSummaryRequest(req) {
		summary = req
	} else if msgs, _ := req["messages"].([]any); len(msgs) > 0 {
		summary = suffixSummary(msgs)
	}
	violation := checkPairing(req)
	if violation == "" && s.script.Strict {
		violation = unknownField(req, knownChatFields)
	}
	rep, ok := s.next(w, r, apiChat, req, violation, summary, writeError)
	if !ok {
		return
	}
	u := s.account(false, summary != nil, req, rep)
	if stream, _ := req["stream"].(bool); stream {
		s.stream(w, rep, u)
		return
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	if len(rep.ToolCalls) > 0 {
		var calls []map[string]any
		for _, c := range rep.ToolCalls {
			calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		msg["tool_calls"] = calls
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": "chatcmpl-alisio", "object": "chat.completion", "created": time.Now().Unix(),
		"model": req["model"], "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": rep.FinishReason}},
		"usage": s.chatUsage(rep, u)})
}

// next records req, rejects it with violation (when not empty) as the real API would, and picks the reply:
// for a summarizer request (summary, in the Chat Completions shape, is not nil) a scripted or automatic
// checkpoint, else the next scripted reply. It answers scripted delays, HTTP errors and garbage itself and
// then reports false.
func (s *Server) next(w http.ResponseWriter, r *http.Request, api string, req map[string]any, violation string, summary map[string]any,
	fail func(http.ResponseWriter, int, string)) (Reply, bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if violation != "" {
		s.violations = append(s.violations, violation)
		s.mu.Unlock()
		fail(w, http.StatusBadRequest, violation)
		return Reply{}, false
	}
	if status, body := s.overWindow(api, req); status != 0 {
		s.overWindowCount++
		s.mu.Unlock()
		writeJSON(w, status, body)
		return Reply{}, false
	}
	var rep Reply
	switch {
	case summary != nil && len(s.script.Summaries) > 0:
		rep = s.script.Summaries[0]
		s.script.Summaries = s.script.Summaries[1:]
	case summary != nil:
		rep = Reply{Text: autoCheckpoint(summary)}
	case len(s.script.Replies) == 0 && s.script.Loop && len(s.replies) > 0:
		s.script.Replies = append([]Reply(nil), s.replies...)
		fallthrough
	case len(s.script.Replies) > 0:
		rep = s.script.Replies[0]
		s.script.Replies = s.script.Replies[1:]
	default:
		rep = Reply{Text: "(alisio test provider: the script has no more replies; restart alisio-testprovider to play it again)"}
	}
	if summary != nil {
		rep.DelayMs += s.script.SummaryDelayMs
	}
	s.mu.Unlock()
	if rep.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(rep.DelayMs) * time.Millisecond):
		case <-r.Context().Done():
			s.mu.Lock()
			s.cancelled++
			s.mu.Unlock()
			return Reply{}, false
		}
	}
	switch {
	case rep.Status != 0:
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		fail(w, rep.Status, rep.Error)
		return Reply{}, false
	case rep.Garbage:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
		return Reply{}, false
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
		if len(rep.ToolCalls) > 0 {
			rep.FinishReason = "tool_calls"
		}
	}
	return rep, true
}

// account is the input usage of req, an answered request (a summarizer's when summary) of the Anthropic kind
// or of the OpenAI kind, under the server's cache model (none with NoCache); a scripted PromptTokens replaces
// the total. It is recorded for Usages.
func (s *Server) account(anthropic, summary bool, req map[string]any, rep Reply) cacheUsage {
	pieces := openAIPieces(req)
	if anthropic {
		pieces = anthropicPieces(req)
	}
	s.mu.Lock()
	var u cacheUsage
	switch {
	case s.script.NoCache:
		u = cacheUsage{Prompt: charsOf(pieces) / 4}
	case anthropic:
		u = s.cache.anthropic(pieces)
	default:
		u = s.cache.openAI(pieces)
	}
	if cpt := s.script.CharsPerToken; cpt > 0 { // the cache models count chars/4
		u = cacheUsage{Prompt: int(float64(u.Prompt) * 4 / cpt), Read: int(float64(u.Read) * 4 / cpt), Written: int(float64(u.Written) * 4 / cpt)}
	}
	s.mu.Unlock()
	if rep.PromptTokens > 0 {
		u.Prompt = rep.PromptTokens
		u.Read = min(u.Read, u.Prompt)
		u.Written = min(u.Written, u.Prompt-u.Read)
	}
	s.mu.Lock()
	s.usages = append(s.usages, RequestUsage{Summary: summary, Prompt: u.Prompt, Cached: u.Read, Writes: u.Written})
	s.mu.Unlock()
	return u
}

// chatUsage is the usage of a Chat Completions answer (cached tokens in prompt_tokens_details, which servers
// without a cache leave out).
func (s *Server) chatUsage(rep Reply, u cacheUsage) map[string]any {
	completion := (len(rep.Text) + len(rep.Reasoning)) / 4
	out := map[string]any{"prompt_tokens": u.Prompt, "completion_tokens": completion, "total_tokens": u.Prompt + completion}
	if !s.script.NoCache {
		out["prompt_tokens_details"] = map[string]any{"cached_tokens": u.Read}
	}
	return out
}

// stream answers as Server-Sent Events, the way the API streams: role, content pieces, tool call pieces,
// the finish reason, then usage and [DONE].
func (s *Server) stream(w http.ResponseWriter, rep Reply, u cacheUsage) {
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any, extra map[string]any) bool {
		chunk := map[string]any{"id": "chatcmpl-alisio", "object": "chat.completion.chunk", "created": 1, "model": "alisio-test",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		for k, v := range extra {
			chunk[k] = v
		}
		if delta == nil {
			chunk["choices"] = []any{}
		}
		b, _ := json.Marshal(chunk)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range pieces(rep.Reasoning) {
		send(map[string]any{"reasoning_content": piece}, nil, nil)
	}
	for piece := range s.textPieces(rep.Text) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	if rep.FloodBytes > 0 && !s.flood(rep, send) {
		return
	}
	for i, c := range rep.ToolCalls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil, nil)
		args := pieces(c.Arguments)
		for j, piece := range args {
			if rep.CutMidToolCall && j >= len(args)/2 {
				return // the connection drops mid-call: no finish reason, no [DONE]
			}
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil, nil)
		}
	}
	send(map[string]any{}, rep.FinishReason, nil)
	send(nil, nil, map[string]any{"usage": s.chatUsage(rep, u)})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// flood streams rep.FloodBytes bytes in 64 KB pieces, counting what was written, until the client stops
// reading; it reports whether the whole flood was sent.
func (s *Server) flood(rep Reply, send func(delta map[string]any, finish any, extra map[string]any) bool) bool {
	piece := strings.Repeat("x", 64<<10)
	delta := map[string]any{"content": piece}
	if len(rep.ToolCalls) > 0 {
		c := rep.ToolCalls[0]
		send(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": `{"text":"`}}}}, nil, nil)
		delta = map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": piece}}}}
	}
	for sent := 0; sent < rep.FloodBytes; sent += len(piece) {
		if !send(delta, nil, nil) {
			return false
		}
		s.mu.Lock()
		s.flooded += int64(len(piece))
		s.mu.Unlock()
	}
	return true
}

// pieces splits s into small chunks, as a streaming API does.
func pieces(s string) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := min(len(r), 7)
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

// checkPairing applies the API's rule: each tool message answers a call of the assistant message before it,
// and no message other than a tool result comes while calls are unanswered.
func checkPairing(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	open := map[string]bool{}
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		if role == "tool" {
			id, _ := m["tool_call_id"].(string)
			if !open[id] {
				return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, id)
			}
			delete(open, id)
			continue
		}
		if len(open) > 0 {
			var ids []string
			for id := range open {
				ids = append(ids, id)
			}
			return fmt.Sprintf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id' (missing %s)", i, strings.Join(ids, ", "))
		}
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			id, _ := cm["id"].(string)
			open[id] = true
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	if status >= 500 {
		typ = "server_error"
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ}})
}

func isSummaryRequest(req map[string]any) bool {
	rf, _ := req["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	return js["name"] == "checkpoint"
}

var userBlock = regexp.MustCompile(`(?s)<user>\n(.*?)\n</user>`)

// autoCheckpoint answers a summarizer request with a valid checkpoint that quotes the user's messages as
// instructions, restricted to the fields the request's schema asks for.
func autoCheckpoint(req map[string]any) string {
	prompt := ""
	if msgs, ok := req["messages"].([]any); ok && len(msgs) > 0 {
		last, _ := msgs[len(msgs)-1].(map[string]any)
		prompt, _ = last["content"].(string)
	}
	instructions := []string{}
	for _, m := range userBlock.FindAllStringSubmatch(prompt, -1) {
		instructions = append(instructions, m[1])
	}
	cp := map[string]any{"goal": "(test provider) continue the user's task", "instructions": instructions,
		"discoveries": []string{}, "accomplished": []string{fmt.Sprintf("%d characters of history summarized", len(prompt))},
		"currentState": "(test provider checkpoint)", "nextSteps": []string{"continue"}, "relevantFiles": []any{}}
	rf, _ := req["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	if props, ok := schema["properties"].(map[string]any); ok {
		for k := range cp {
			if _, wanted := props[k]; !wanted {
				delete(cp, k)
			}
		}
		// Fields a plugin added: arrays get the user's words (a memory plugin saves them), strings a note.
		for k, v := range props {
			if _, have := cp[k]; have {
				continue
			}
			if p, _ := v.(map[string]any); p["type"] == "array" {
				cp[k] = instructions
			} else {
				cp[k] = "(test provider) " + k
			}
		}
	}
	b, _ := json.Marshal(cp)
	return string(b)
}
