package agent

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Bounds of a recall answer: the hits one search lists, and the context shown around each match.
const (
	recallHits    = 20
	recallSnippet = 160
)

// recall answers the recall tool for session: it searches the session's compacted messages or reads one
// message of its history, from the store, never another session's (tools.Recaller).
func (a *Agent) recall(_ context.Context, session string, args map[string]any) (string, error) {
	hist, err := a.Store.History(session)
	if err != nil {
		return "", fmt.Errorf("reading this session's history: %w", err)
	}
	if n, ok := intArg(args, "message"); ok {
		offset, _ := intArg(args, "offset")
		return readMessage(hist, n, offset, max(a.Tools.OutputChars()-400, 1000))
	}
	return searchMessages(hist, args)
}

func intArg(args map[string]any, key string) (int, bool) {
	f, ok := args[key].(float64)
	return int(f), ok
}

// messageText is everything of m recall searches and shows: its text, and an assistant message's calls.
func messageText(m *transcript.Message) string {
	var b strings.Builder
	b.WriteString(m.Text)
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, "\n[tool call %s: %s %s]", c.ID, c.Name, c.Arguments)
	}
	return b.String()
}

// header names message n as recall shows it.
func header(n int, m *transcript.Message) string {
	var parts []string
	parts = append(parts, string(m.Role))
	if m.ToolName != "" {
		parts = append(parts, "result of "+m.ToolName)
	}
	if m.ToolCallID != "" {
		parts = append(parts, "call "+m.ToolCallID)
	}
	switch {
	case m.Summary:
		parts = append(parts, "a checkpoint")
	case !m.Compacted:
		parts = append(parts, "still in the conversation")
	}
	return fmt.Sprintf("#%d (%s)", n, strings.Join(parts, ", "))
}

// readMessage shows message n of hist from offset, at most window chars, saying how to read on.
func readMessage(hist []transcript.Message, n, offset, window int) (string, error) {
	if n >= len(hist) {
		return "", fmt.Errorf("this session has messages #0 to #%d; there is no #%d", len(hist)-1, n)
	}
	m := &hist[n]
	text := []rune(messageText(m))
	if offset >= len(text) && offset > 0 {
		return "", fmt.Errorf("message #%d has %d characters; offset %d is past its end", n, len(text), offset)
	}
	end := min(offset+window, len(text))
	var b strings.Builder
	fmt.Fprintf(&b, "%s, characters %d–%d of %d:\n%s", header(n, m), offset, end, len(text), string(text[offset:end]))
	if end < len(text) {
		fmt.Fprintf(&b, "\n[… %d more characters: recall with message %d and offset %d]", len(text)-end, n, end)
	}
	return b.String(), nil
}

// searchMessages lists the compacted messages of hist that match args (query, path, callId, within
// fromMessage–toMessage), a snippet each.
func searchMessages(hist []transcript.Message, args map[string]any) (string, error) {
	query, _ := args["query"].(string)
	path, _ := args["path"].(string)
	callID, _ := args["callId"].(string)
	if query == "" && path == "" && callID == "" {
		return "", fmt.Errorf("give query, path or callId to search, or message to read one")
	}
	from, _ := intArg(args, "fromMessage")
	to, ok := intArg(args, "toMessage")
	if !ok || to >= len(hist) {
		to = len(hist) - 1
	}
	compacted := 0
	var hits []string
	matched := 0
	for n := from; n <= to; n++ {
		m := &hist[n]
		if !m.Compacted || m.Truncated || m.Undone {
			continue // only originals a compaction replaced: reduced copies and undone checkpoints are not
		}
		compacted++
		text := messageText(m)
		lower := strings.ToLower(text)
		at := 0
		switch {
		case callID != "" && m.ToolCallID != callID && !strings.Contains(text, "[tool call "+callID+":"):
			continue
		case path != "" && !strings.Contains(text, path):
			continue
		case query != "":
			if at = strings.Index(lower, strings.ToLower(query)); at < 0 {
				continue
			}
		case path != "":
			at = strings.Index(text, path)
		}
		matched++
		if len(hits) < recallHits {
			hits = append(hits, header(n, m)+": "+snippet(text, at))
		}
	}
	if compacted == 0 {
		return "Nothing of this session in that range has been compacted: every message is still in the conversation.", nil
	}
	if matched == 0 {
		return fmt.Sprintf("No compacted message matches (%d searched).", compacted), nil
	}
	out := fmt.Sprintf("%d compacted message(s) match:\n%s", matched, strings.Join(hits, "\n"))
	if matched > len(hits) {
		out += fmt.Sprintf("\n[… %d more: narrow the search, or use fromMessage and toMessage]", matched-len(hits))
	}
	return out + "\nRead one whole with recall and its message number.", nil
}

// snippet is the text around byte position at, on one line.
func snippet(text string, at int) string {
	start := max(at-recallSnippet/2, 0)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	end := min(start+recallSnippet, len(text))
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s
}
