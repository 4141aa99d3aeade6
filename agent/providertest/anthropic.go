package providertest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropic serves POST /v1/messages in the Anthropic Messages shape (streamed or not).
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeAnthropicError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return
	}
	// The summarizer's requests carry the checkpoint instructions and no tools.
	var summary map[string]any
	if tools, _ := req["tools"].([]any); len(tools) == 0 && strings.Contains(fmt.Sprint(req["system"]), "checkpoint") {
		summary = openAIShape(req)
		if oc, _ := req["output_config"].(map[string]any); oc != nil {
			if format, _ := oc["format"].(map[string]any); format != nil {
				summary["response_format"] = map[string]any{"json_schema": map[string]any{"schema": format["schema"]}}
			}
		}
	} else if msgs, _ := req["messages"].([]any); len(msgs) > 0 {
		summary = suffixSummary(msgs)
	}
	violation := checkAnthropicPairing(req)
	if violation == "" {
		violation = checkThinkingSignatures(req)
	}
	rep, ok := s.next(w, r, apiAnthropic, req, violation, summary, writeAnthropicError)
	if !ok {
		return
	}
	u := s.account(true, summary != nil, req, rep)
	input := map[string]any{"input_tokens": u.Prompt - u.Read - u.Written, "cache_read_input_tokens": u.Read, "cache_creation_input_tokens": u.Written}
	stop := map[string]string{"length": "max_tokens", "tool_calls": "tool_use", "stop": "end_turn"}[rep.FinishReason]
	blocks := anthropicBlocks(rep)
	if stream, _ := req["stream"].(bool); !stream {
		writeJSON(w, http.StatusOK, map[string]any{"id": "msg_alisio", "type": "message", "role": "assistant", "model": req["model"],
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": withOutput(input, len(rep.Text)/4)})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	send("message_start", map[string]any{"message": map[string]any{"id": "msg_alisio", "type": "message", "role": "assistant",
		"model": req["model"], "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": withOutput(input, 1)}})
	for i, b := range blocks {
		switch b["type"] {
		case "thinking":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, p := range pieces(b["thinking"].(string)) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "thinking_delta", "thinking": p}})
			}
			send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "signature_delta", "signature": b["signature"]}})
		case "redacted_thinking":
			send("content_block_start", map[string]any{"index": i, "content_block": b})
		case "text":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for p := range s.textPieces(b["text"].(string)) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": p}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			raw, _ := json.Marshal(b["input"])
			args := pieces(string(raw))
			for j, p := range args {
				if rep.CutMidToolCall && j >= len(args)/2 {
					return
				}
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": p}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": len(rep.Text) / 4}})
	send("message_stop", map[string]any{})
}

// withOutput is the usage input with output_tokens added.
func withOutput(input map[string]any, output int) map[string]any {
	out := map[string]any{"output_tokens": output}
	for k, v := range input {
		out[k] = v
	}
	return out
}

func anthropicBlocks(rep Reply) []map[string]any {
	var blocks []map[string]any
	thinking := rep.Thinking
	if rep.Reasoning != "" {
		thinking = append([]string{rep.Reasoning}, thinking...)
	}
	for i, t := range thinking {
		blocks = append(blocks, map[string]any{"type": "thinking", "thinking": t, "signature": sign("thinking", t)})
		if i == 0 && rep.RedactedThinking != "" {
			payload := base64.StdEncoding.EncodeToString([]byte(rep.RedactedThinking))
			blocks = append(blocks, map[string]any{"type": "redacted_thinking", "data": payload + "." + sign("redacted", payload)})
		}
	}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": rep.Text})
	}
	for _, c := range rep.ToolCalls {
		var input any
		if json.Unmarshal([]byte(c.Arguments), &input) != nil {
			input = map[string]any{}
		}
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input})
	}
	return blocks
}

// checkAnthropicPairing applies the Messages API's rules: the first message is the user's; every tool_use is
// answered by a tool_result in the next message; every tool_result answers a tool_use of the previous one.
func checkAnthropicPairing(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	var pending []string
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		if i == 0 && role != "user" {
			return "messages: the first message must use the \"user\" role"
		}
		blocks, _ := m["content"].([]any)
		results := map[string]bool{}
		var uses []string
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "tool_result":
				id, _ := bm["tool_use_id"].(string)
				if !contains(pending, id) {
					return fmt.Sprintf("messages.%d.content: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, id)
				}
				results[id] = true
			case "tool_use":
				id, _ := bm["id"].(string)
				uses = append(uses, id)
			}
		}
		var missing []string
		for _, id := range pending {
			if !results[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return fmt.Sprintf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(missing, ", "))
		}
		pending = uses
	}
	if len(pending) > 0 {
		return fmt.Sprintf("messages: `tool_use` ids were found without `tool_result` blocks immediately after: %s.", strings.Join(pending, ", "))
	}
	return ""
}

// sign is this server's stand-in for the API's signatures: a digest of the block's content, so that a block
// changed in any way (cut, merged, re-signed) no longer matches.
func sign(kind, content string) string {
	sum := sha256.Sum256([]byte("alisio-test/" + kind + "/" + content))
	return "sig-" + hex.EncodeToString(sum[:12])
}

// checkThinkingSignatures rejects, as the API does, a thinking block whose signature does not match its text
// and a redacted_thinking block whose data was not issued as is.
func checkThinkingSignatures(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		blocks, _ := m["content"].([]any)
		for j, b := range blocks {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "thinking":
				text, _ := bm["thinking"].(string)
				if sig, _ := bm["signature"].(string); sig != sign("thinking", text) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
			case "redacted_thinking":
				data, _ := bm["data"].(string)
				payload, sig, _ := strings.Cut(data, ".")
				if sig != sign("redacted", payload) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block", i, j)
				}
			}
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// openAIShape presents an Anthropic summarizer request as the Chat Completions shape autoCheckpoint reads.
func openAIShape(req map[string]any) map[string]any {
	msgs, _ := req["messages"].([]any)
	prompt := ""
	if len(msgs) > 0 {
		m, _ := msgs[len(msgs)-1].(map[string]any)
		blocks, _ := m["content"].([]any)
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if t, ok := bm["text"].(string); ok {
				prompt += t
			}
		}
	}
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": prompt}}}
}

func writeAnthropicError(w http.ResponseWriter, status int, msg string) {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "api_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
