package providertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responses serves POST /v1/responses (stateless, non-streamed): reasoning comes back as encrypted items that
// must be replayed unchanged, function calls as function_call items.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	var summary map[string]any
	if text, _ := req["text"].(map[string]any); text != nil {
		if format, _ := text["format"].(map[string]any); format["name"] == "checkpoint" {
			input, _ := req["input"].([]any)
			prompt := ""
			if len(input) > 0 {
				m, _ := input[len(input)-1].(map[string]any)
				prompt, _ = m["content"].(string)
			}
			summary = map[string]any{"messages": []any{map[string]any{"content": prompt}},
				"response_format": map[string]any{"json_schema": map[string]any{"schema": format["schema"]}}}
		}
	} else if input, _ := req["input"].([]any); len(input) > 0 {
		summary = suffixSummary(input)
	}
	s.mu.Lock()
	violation := s.checkResponsesInput(req)
	s.mu.Unlock()
	if violation == "" && s.script.Strict {
		violation = unknownField(req, knownResponsesFields)
	}
	rep, ok := s.next(w, r, apiResponses, req, violation, summary, writeError)
	if !ok {
		return
	}
	u := s.account(false, summary != nil, req, rep)
	usage := map[string]any{"input_tokens": u.Prompt, "output_tokens": len(rep.Text) / 4, "total_tokens": u.Prompt + len(rep.Text)/4}
	if !s.script.NoCache {
		usage["input_tokens_details"] = map[string]any{"cached_tokens": u.Read}
	}
	var output []any
	if rep.Reasoning != "" {
		s.mu.Lock()
		if s.encrypted == nil {
			s.encrypted = map[string]bool{}
		}
		enc := fmt.Sprintf("gAAAAB%06d%s", len(s.encrypted), strings.Repeat("=", 4))
		s.encrypted[enc] = true
		s.mu.Unlock()
		output = append(output, map[string]any{"type": "reasoning", "id": "rs_" + enc[6:12],
			"summary": []any{map[string]any{"type": "summary_text", "text": rep.Reasoning}}, "encrypted_content": enc})
	}
	if rep.Text != "" {
		output = append(output, map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
	}
	for _, c := range rep.ToolCalls {
		output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name,
			"arguments": c.Arguments, "status": "completed"})
	}
	status, incomplete := "completed", any(nil)
	if rep.FinishReason == "length" {
		status, incomplete = "incomplete", map[string]any{"reason": "max_output_tokens"}
	}
	resp := map[string]any{"id": "resp_alisio", "object": "response", "status": status,
		"incomplete_details": incomplete, "model": req["model"], "output": output,
		"usage": usage}
	if stream, _ := req["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	// Streamed: created, reasoning-summary and text deltas, then completed (or incomplete) with the response.
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(typ string, data map[string]any) {
		data["type"], data["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("response.created", map[string]any{"response": map[string]any{"id": "resp_alisio", "object": "response", "status": "in_progress", "output": []any{}}})
	for _, p := range pieces(rep.Reasoning) {
		send("response.reasoning_summary_text.delta", map[string]any{"item_id": "rs", "output_index": 0, "summary_index": 0, "delta": p})
	}
	for p := range s.textPieces(rep.Text) {
		send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": p})
	}
	if rep.CutMidToolCall {
		return // the connection drops before the response completes
	}
	final := "response.completed"
	if status == "incomplete" {
		final = "response.incomplete"
	}
	send(final, map[string]any{"response": resp})
}

// checkResponsesInput applies the API's rules: encrypted reasoning must be exactly what was issued, every
// function_call_output answers an earlier function_call, and every function_call has its output. The caller
// holds s.mu.
func (s *Server) checkResponsesInput(req map[string]any) string {
	input, _ := req["input"].([]any)
	calls, answered := map[string]bool{}, map[string]bool{}
	for i, raw := range input {
		item, _ := raw.(map[string]any)
		switch item["type"] {
		case "reasoning":
			enc, _ := item["encrypted_content"].(string)
			if !s.encrypted[enc] {
				return fmt.Sprintf("input[%d]: the encrypted content for item %v could not be verified", i, item["id"])
			}
		case "function_call":
			id, _ := item["call_id"].(string)
			calls[id] = true
		case "function_call_output":
			id, _ := item["call_id"].(string)
			if !calls[id] {
				return fmt.Sprintf("input[%d]: no tool call found for function call output with call_id %s", i, id)
			}
			answered[id] = true
		}
	}
	for id := range calls {
		if !answered[id] {
			return "no tool output found for function call " + id
		}
	}
	return ""
}
