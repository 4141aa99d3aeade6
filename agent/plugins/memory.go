package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
}

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
	added, err := m.Store.AddMemories(in.Workspace, in.Session, texts)
	if err != nil {
		return compaction.AfterResult{}, err
	}
	all, err := m.Store.Memories(in.Workspace)
	if err != nil {
		return compaction.AfterResult{}, err
	}
	return compaction.AfterResult{InjectContext: Render(all),
		Report: &compaction.PluginReport{Summary: fmt.Sprintf("saved %d new memor%s (%d for this workspace)", len(added), plural(len(added)), len(all))}}, nil
}

// Render lists memories as the model reads them ("" when there are none).
func Render(ms []storage.Memory) string {
	if len(ms) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Memories of this workspace, saved from earlier work (keep following them unless the user says otherwise):")
	for _, m := range ms {
		b.WriteString("\n- ")
		b.WriteString(m.Text)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return "y"
	}
	return "ies"
}
