package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// MemoryName is the built-in memory plugin's name.
const MemoryName = "memory"

// memoriesField is the output field the memory plugin adds to the checkpoint schema.
const memoriesField = "memories"

// Memory is the built-in memory plugin (SPEC PH3): it asks the summarizer, in the same call, for durable
// memories (user preferences, project conventions, lasting facts), saves the new ones per workspace,
// places all of them after the checkpoint, and reports how many it saved. New sessions of the workspace start
// with them (Prompt reads them into the session's instructions).
type Memory struct {
	Store *storage.Store
	// MaxChars bounds what the memories send (memory.maxChars): the newest that fit.
	MaxChars int
}

// MaxMemoryChars is the longest memory saved: a longer one is cut (a memory is one short sentence; a model
// that writes a page there would otherwise send it with every request of every later session).
const MaxMemoryChars = 400

// Name is "memory".
func (m *Memory) Name() string { return MemoryName }

// BeforeCompact asks for the memories field.
func (m *Memory) BeforeCompact(context.Context, compaction.HookInput) (compaction.BeforeResult, error) {
	return compaction.BeforeResult{
		Instructions: `"memories": durable facts worth remembering in future sessions of this workspace, one short sentence each: ` +
			`the user's lasting preferences, the project's conventions (build, test, style commands), stable facts about the codebase. ` +
			`Not the current task's progress. An empty array when there are none.`,
		OutputFields: map[string]json.RawMessage{memoriesField: json.RawMessage(`{"type":"array","items":{"type":"string"},"description":"durable memories of the workspace"}`)},
	}, nil
}

// AfterCompact saves the new memories and injects them all.
func (m *Memory) AfterCompact(_ context.Context, in compaction.HookInput) (compaction.AfterResult, error) {
	var texts []string
	if raw, ok := in.Fields[memoriesField]; ok {
		if err := json.Unmarshal(raw, &texts); err != nil {
			return compaction.AfterResult{}, fmt.Errorf("reading the memories field: %w", err)
		}
	}
	for i, t := range texts {
		texts[i] = cut(strings.TrimSpace(t), MaxMemoryChars)
	}
	added, err := m.Store.AddMemories(in.Workspace, in.Session, texts)
	if err != nil {
		return compaction.AfterResult{}, err
	}
	all, err := m.Store.Memories(in.Workspace)
	if err != nil {
		return compaction.AfterResult{}, err
	}
	text, sent := Render(all, m.MaxChars)
	held := fmt.Sprintf("%d for this workspace", len(all))
	if sent < len(all) {
		held += fmt.Sprintf("; the newest %d fit memory.maxChars and are sent", sent)
	}
	summary := fmt.Sprintf("saved %d new memor%s (%s)", len(added), plural(len(added)), held)
	return compaction.AfterResult{InjectContext: text, Report: &compaction.PluginReport{Summary: summary}}, nil
}

// Render lists memories (oldest first) as the model reads them, within maxChars (0: no bound): the newest
// that fit, with a line saying how many older ones were left out. sent is how many it lists; "" when none.
func Render(ms []storage.Memory, maxChars int) (text string, sent int) {
	const head = "Memories of this workspace, saved from earlier work (keep following them unless the user says otherwise):"
	left := func(n int) string {
		return fmt.Sprintf("\n(%d older memor%s of this workspace are not listed here.)", n, plural(n))
	}
	entry := func(i int) int { return len("\n") + len(compaction.ListItem(ms[i].Text)) }
	size := len(head)
	for i := range ms {
		size += entry(i)
	}
	from := 0
	if maxChars > 0 && size > maxChars {
		// The newest that fit beside the line saying how many were left out.
		budget, n := maxChars-len(left(len(ms))), len(head)
		for from = len(ms); from > 0 && n+entry(from-1) <= budget; from-- {
			n += entry(from - 1)
		}
	}
	if from == len(ms) {
		return "", 0
	}
	var b strings.Builder
	b.WriteString(head)
	for _, m := range ms[from:] {
		b.WriteString("\n")
		b.WriteString(compaction.ListItem(m.Text))
	}
	if from > 0 {
		b.WriteString(left(from))
	}
	return b.String(), len(ms) - from
}

// cut is text up to limit bytes, ended at a word with "…" when longer.
func cut(text string, limit int) string {
	if len(text) <= limit {
		return text
	}
	end := strings.LastIndexByte(text[:limit-len("…")], ' ')
	if end < limit/2 {
		end = limit - len("…")
		for end > 0 && !utf8.RuneStart(text[end]) {
			end--
		}
	}
	return strings.TrimRight(text[:end], " ,;:") + "…"
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
