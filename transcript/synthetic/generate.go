// Package synthetic generates realistic synthetic coding-agent transcripts for tests, benchmarks, the demo and
// `alisio-lsp sessions generate`: turns of user prompts, assistant replies with (parallel) tool calls, and
// tool results of varied size. It does not link the testing package, so the shipped binary may use it.
package synthetic

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Config shapes a generated transcript.
type Config struct {
	// Seed makes the output deterministic.
	Seed uint64
	// Messages is the approximate number of messages wanted (the last turn is completed).
	Messages int
	// MaxParallel is the most tool calls one assistant message issues (at least 1).
	MaxParallel int
	// CallsPerTurn is the average number of assistant tool-call rounds in a turn.
	CallsPerTurn int
	// ResultChars is the typical size of a tool result; one in HugeEvery results is 40 times larger
	// (HugeEvery 0: never).
	ResultChars int
	HugeEvery   int
	// OpenCallAtEnd leaves the last tool call without its result (a crash mid-call).
	OpenCallAtEnd bool
}

// Default is a mid-size session.
func Default(messages int) Config {
	return Config{Seed: 1, Messages: messages, MaxParallel: 3, CallsPerTurn: 4, ResultChars: 1200, HugeEvery: 50}
}

var files = []string{"server/server.go", "agent/loop.go", "compaction/reduce.go", "storage/store.go",
	"README.md", "cmd/alisio-lsp/main.go", "editors/vscode/src/extension.ts", "docs/protocol.md"}

var words = strings.Fields("the function returns an error when the session store is locked and the caller retries " +
	"after compaction finishes so the transcript stays valid while tool calls keep their results")

// Generate returns a transcript following cfg. Message IDs are deterministic.
func Generate(cfg Config) []transcript.Message {
	r := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	if cfg.MaxParallel < 1 {
		cfg.MaxParallel = 1
	}
	if cfg.CallsPerTurn < 1 {
		cfg.CallsPerTurn = 1
	}
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var out []transcript.Message
	add := func(m transcript.Message) {
		m.ID = fmt.Sprintf("gen-%06d", len(out))
		m.CreatedAt = base.Add(time.Duration(len(out)) * time.Second)
		out = append(out, m)
	}
	results := 0
	for turn := 0; len(out) < cfg.Messages; turn++ {
		f := files[r.IntN(len(files))]
		add(transcript.Message{Role: transcript.RoleUser, Text: fmt.Sprintf(
			"Turn %d: please fix the bug in %s. Do not change the public API. %s", turn, f, sentence(r, 20))})
		rounds := 1 + r.IntN(2*cfg.CallsPerTurn)
		for c := 0; c < rounds && len(out) < cfg.Messages; c++ {
			n := 1 + r.IntN(cfg.MaxParallel)
			var calls []transcript.ToolCall
			for k := 0; k < n; k++ {
				args, _ := json.Marshal(map[string]any{"path": files[r.IntN(len(files))], "query": sentence(r, 3)})
				calls = append(calls, transcript.ToolCall{
					ID: fmt.Sprintf("call_%d_%d_%d", turn, c, k), Name: []string{"read_file", "search", "run"}[r.IntN(3)],
					Arguments: string(args)})
			}
			add(transcript.Message{Role: transcript.RoleAssistant, Text: "Let me look. " + sentence(r, 8), ToolCalls: calls})
			for _, call := range calls {
				size := cfg.ResultChars/2 + r.IntN(cfg.ResultChars+1)
				results++
				if cfg.HugeEvery > 0 && results%cfg.HugeEvery == 0 {
					size *= 40
				}
				add(transcript.Message{Role: transcript.RoleTool, ToolCallID: call.ID, ToolName: call.Name, Text: text(r, size)})
			}
		}
		add(transcript.Message{Role: transcript.RoleAssistant, Text: fmt.Sprintf("Done with %s: %s", f, sentence(r, 30))})
	}
	if cfg.OpenCallAtEnd {
		add(transcript.Message{Role: transcript.RoleAssistant, Text: "Running the tests.", ToolCalls: []transcript.ToolCall{
			{ID: "call_open", Name: "run", Arguments: `{"command":"go test ./..."}`}}})
	}
	for i := range out {
		out[i].Measure()
	}
	return out
}

func sentence(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

func text(r *rand.Rand, chars int) string {
	var b strings.Builder
	b.Grow(chars + 16)
	for b.Len() < chars {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()[:chars]
}
