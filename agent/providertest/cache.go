package providertest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The prompt caches of the real APIs, as this server models them for the usage it reports (tokens are chars/4
// of the request as it arrived, each tool, system text, message or content block as one piece):
//
//   - OpenAI (Chat Completions, Responses): automatic prefix caching. A request reads from the cache its
//     longest common prefix with an earlier request, in steps of 128 tokens from 1,024 up; usage reports it as
//     prompt_tokens_details.cached_tokens (Responses: input_tokens_details.cached_tokens).
//   - Anthropic (Messages): only explicit cache_control breakpoints cache. A request reads the longest prefix
//     an earlier request wrote at one of its breakpoints, found at a breakpoint of this request or up to 20
//     blocks before one; it writes everything from there to its last breakpoint (a prefix under 1,024 tokens
//     is not cached). Usage reports cache_read_input_tokens, cache_creation_input_tokens and, as input_tokens,
//     the rest.
const (
	minCachedTokens   = 1024
	openAICacheStep   = 128
	anthropicLookback = 20
	// keptBodies bounds the earlier requests the OpenAI cache compares with (a long-running server).
	keptBodies = 64
)

// cacheUsage is a request's input tokens: all of them, those read from the cache and those written to it.
type cacheUsage struct {
	Prompt, Read, Written int
}

// promptCache is what the server's caches hold.
type promptCache struct {
	// bodies are the earlier OpenAI-kind requests, newest last.
	bodies []string
	// written are the prefixes Anthropic-kind requests wrote at their breakpoints, by hash.
	written map[[32]byte]bool
}

// piece is one cached unit of a request: its text as it arrived (cache_control left out) and whether a
// breakpoint ends it.
type piece struct {
	text       string
	breakpoint bool
}

// openAIPieces are a Chat Completions or Responses request's pieces: the tools, the instructions, then each
// message or input item.
func openAIPieces(req map[string]any) []piece {
	var out []piece
	add := func(v any) {
		if v != nil {
			b, _ := json.Marshal(v)
			out = append(out, piece{text: string(b)})
		}
	}
	add(req["tools"])
	add(req["instructions"])
	for _, key := range []string{"messages", "input"} {
		list, _ := req[key].([]any)
		for _, m := range list {
			add(m)
		}
	}
	return out
}

// anthropicPieces are a Messages request's pieces in the order the API caches them — each tool, each system
// block, each message's content blocks — with its breakpoints.
func anthropicPieces(req map[string]any) []piece {
	var out []piece
	add := func(prefix string, v any) {
		m, _ := v.(map[string]any)
		_, marked := m["cache_control"]
		if marked {
			c := make(map[string]any, len(m))
			for k, x := range m {
				if k != "cache_control" {
					c[k] = x
				}
			}
			v = c
		}
		b, _ := json.Marshal(v)
		out = append(out, piece{text: prefix + string(b), breakpoint: marked})
	}
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		add("tool:", t)
	}
	switch sys := req["system"].(type) {
	case string:
		add("system:", map[string]any{"type": "text", "text": sys})
	case []any:
		for _, b := range sys {
			add("system:", b)
		}
	}
	msgs, _ := req["messages"].([]any)
	for _, raw := range msgs {
		m, _ := raw.(map[string]any)
		role := fmt.Sprint(m["role"]) + ":"
		switch content := m["content"].(type) {
		case string:
			add(role, map[string]any{"type": "text", "text": content})
		case []any:
			for _, b := range content {
				add(role, b)
			}
		}
	}
	return out
}

func charsOf(pieces []piece) int {
	n := 0
	for _, p := range pieces {
		n += len(p.text)
	}
	return n
}

// openAI accounts a request of the OpenAI kind: the longest prefix it shares with an earlier request.
func (c *promptCache) openAI(pieces []piece) cacheUsage {
	var body []byte
	for _, p := range pieces {
		body = append(body, p.text...)
	}
	shared := 0
	for _, prev := range c.bodies {
		shared = max(shared, commonPrefixLen(prev, string(body)))
	}
	c.bodies = append(c.bodies, string(body))
	if len(c.bodies) > keptBodies {
		c.bodies = slices.Delete(c.bodies, 0, len(c.bodies)-keptBodies)
	}
	read := shared / 4 / openAICacheStep * openAICacheStep
	if read < minCachedTokens {
		read = 0
	}
	return cacheUsage{Prompt: len(body) / 4, Read: read}
}

// anthropic accounts a request of the Anthropic kind: what earlier breakpoints wrote that it reads, and what
// its own breakpoints write.
func (c *promptCache) anthropic(pieces []piece) cacheUsage {
	if c.written == nil {
		c.written = map[[32]byte]bool{}
	}
	// hashes[i] and ends[i] are the hash and the length in chars of the prefix that ends with piece i.
	hashes := make([][32]byte, len(pieces))
	ends := make([]int, len(pieces))
	var h [32]byte
	n := 0
	for i, p := range pieces {
		h = sha256.Sum256(append(h[:], p.text...))
		n += len(p.text)
		hashes[i], ends[i] = h, n
	}
	var marks []int
	for i, p := range pieces {
		if p.breakpoint {
			marks = append(marks, i)
		}
	}
	readChars := 0
	for _, b := range marks {
		for i := b; i >= 0 && i >= b-anthropicLookback; i-- {
			if c.written[hashes[i]] {
				readChars = max(readChars, ends[i])
				break
			}
		}
	}
	written := 0
	if len(marks) > 0 {
		last := marks[len(marks)-1]
		for _, b := range marks {
			if ends[b]/4 >= minCachedTokens {
				c.written[hashes[b]] = true
			}
		}
		if ends[last]/4 >= minCachedTokens && ends[last] > readChars {
			written = (ends[last] - readChars) / 4
		}
	}
	return cacheUsage{Prompt: n / 4, Read: readChars / 4, Written: written}
}

func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// knownChatFields are the Chat Completions fields a strict server (Script.Strict) accepts: those of the API
// before prompt caching had request fields.
var knownChatFields = []string{"model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "tools",
	"tool_choice", "response_format", "temperature", "top_p", "n", "stop", "seed", "user", "parallel_tool_calls"}

// knownResponsesFields are the Responses fields a strict server accepts.
var knownResponsesFields = []string{"model", "instructions", "input", "tools", "max_output_tokens", "store", "include", "text",
	"stream", "tool_choice", "reasoning", "temperature", "top_p", "user"}

// unknownField is the violation of a strict server for the first field of req not in known ("" when none),
// in the words of the OpenAI API.
func unknownField(req map[string]any, known []string) string {
	var fields []string
	for k := range req {
		if !slices.Contains(known, k) {
			fields = append(fields, k)
		}
	}
	if len(fields) == 0 {
		return ""
	}
	sort.Strings(fields)
	return "Unrecognized request argument supplied: " + fields[0]
}

// suffixMarker starts the last user message of a summary request in the suffix form (compaction.SuffixMarker,
// which this package does not import): the agent's own request with the checkpoint asked for at its end.
const suffixMarker = "[alisio: compaction]"

// suffixSchema introduces the checkpoint's JSON Schema in that message.
const suffixSchema = "The JSON object must match this JSON Schema:\n"

// textOf is the text of a message's content: a string, or the text blocks of a list (Anthropic, Responses).
func textOf(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, block := range c {
			m, _ := block.(map[string]any)
			if t, ok := m["text"].(string); ok {
				b.WriteString(t)
			}
		}
		return b.String()
	}
	return ""
}

// suffixSummary is msgs, when they are a summary request in the suffix form, in the shape autoCheckpoint
// reads — the user's words as <user> blocks of the prompt, the schema of the last message — and nil for any
// other request.
func suffixSummary(msgs []any) map[string]any {
	if len(msgs) == 0 {
		return nil
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	ask := textOf(last["content"])
	at := strings.Index(ask, suffixMarker)
	if last["role"] != "user" || at < 0 {
		return nil
	}
	var prompt strings.Builder
	for i, raw := range msgs {
		m, _ := raw.(map[string]any)
		text := textOf(m["content"])
		if i == len(msgs)-1 {
			text = text[:at]
		}
		if m["role"] == "user" && strings.TrimSpace(text) != "" && !strings.HasPrefix(text, "[Checkpoint") {
			fmt.Fprintf(&prompt, "<user>\n%s\n</user>\n", text)
		}
	}
	var schema map[string]any
	if i := strings.Index(ask, suffixSchema); i >= 0 {
		_ = json.Unmarshal([]byte(ask[i+len(suffixSchema):]), &schema)
	}
	return map[string]any{"messages": []any{map[string]any{"role": "user", "content": prompt.String()}},
		"response_format": map[string]any{"json_schema": map[string]any{"name": "checkpoint", "schema": schema}}}
}
