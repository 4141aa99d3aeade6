package compaction_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// fromBytes builds a transcript from a byte program, for property and fuzz tests: every byte sequence gives a
// structurally valid transcript (long turns, parallel calls, huge outputs, no user messages, reasoning, JSON
// arguments with long strings). With closeCalls, calls left open at the end get their results.
func fromBytes(data []byte, closeCalls bool) []transcript.Message {
	var out []transcript.Message
	var pending []string
	id := 0
	next := func() string { id++; return fmt.Sprintf("m%d", id) }
	text := func(n int, seed byte) string {
		return strings.Repeat(string(rune('a'+seed%26))+"é ", n/3+1)[:n]
	}
	call := func(seed byte) transcript.ToolCall {
		id++
		args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("dir/f%d.go", seed%7), "content": text(int(seed)*40, seed), "n": int(seed)})
		return transcript.ToolCall{ID: fmt.Sprintf("call_%d", id), Name: "write_file", Arguments: string(args)}
	}
	answer := func(size int, seed byte) {
		if len(pending) == 0 {
			return
		}
		c := pending[0]
		pending = pending[1:]
		out = append(out, transcript.Message{ID: next(), Role: transcript.RoleTool, ToolCallID: c, ToolName: "write_file", Text: text(size, seed)})
	}
	for _, b := range data {
		arg := b / 8
		switch b % 8 {
		case 0:
			out = append(out, transcript.Message{ID: next(), Role: transcript.RoleUser, Text: text(int(arg)*37+5, b)})
		case 1:
			out = append(out, transcript.Message{ID: next(), Role: transcript.RoleAssistant, Text: text(int(arg)*53+1, b)})
		case 2, 3:
			m := transcript.Message{ID: next(), Role: transcript.RoleAssistant, Text: "calling"}
			for k := 0; k <= int(b%8-2)*int(arg%3); k++ {
				c := call(b + byte(k))
				m.ToolCalls = append(m.ToolCalls, c)
				pending = append(pending, c.ID)
			}
			out = append(out, m)
		case 4, 5:
			answer(int(arg)*211+1, b)
		case 6:
			answer(20000+int(arg)*300, b)
		case 7:
			c := call(b)
			pending = append(pending, c.ID)
			out = append(out, transcript.Message{ID: next(), Role: transcript.RoleAssistant, Reasoning: text(int(arg)*700, b),
				ToolCalls: []transcript.ToolCall{c}})
		}
	}
	for closeCalls && len(pending) > 0 {
		answer(100, 1)
	}
	return out
}
