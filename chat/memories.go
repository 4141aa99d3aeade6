package chat

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/alisio-lsp/alisio-lsp/api"
)

// memoriesCommand runs /memories [delete N|ID]: the workspace's memories, after deleting the one named (by
// its number in the list, or the start of its ID).
func (m *model) memoriesCommand(ctx context.Context, arg string, width int) tea.Msg {
	var res api.MemoriesResult
	if err := m.client.Call(ctx, "alisio/memories", api.MemoriesParams{}, &res); err != nil {
		return commandDoneMsg{err: err}
	}
	fields := strings.Fields(arg)
	switch {
	case len(fields) == 0:
		return commandDoneMsg{text: memoriesView(res, width)}
	case len(fields) != 2 || !strings.EqualFold(fields[0], "delete"):
		return commandDoneMsg{err: fmt.Errorf("/memories takes nothing (lists them), or delete N|ID")}
	}
	id, err := memoryNamed(res, fields[1])
	if err != nil {
		return commandDoneMsg{err: err}
	}
	text := ""
	for _, mem := range res.Memories {
		if mem.ID == id {
			text = mem.Text
		}
	}
	if err := m.client.Call(ctx, "alisio/memories", api.MemoriesParams{Delete: id}, &res); err != nil {
		return commandDoneMsg{err: err}
	}
	return commandDoneMsg{text: fmt.Sprintf("Deleted the memory %q: later sessions and compactions do not send it.\n\n%s", clip(text, 80), memoriesView(res, width))}
}

// memoryNamed is the ID of the memory arg names in res: its number in the list, or the start of one ID only.
func memoryNamed(res api.MemoriesResult, arg string) (string, error) {
	if n, err := strconv.Atoi(arg); err == nil {
		if n < 1 || n > len(res.Memories) {
			return "", fmt.Errorf("there is no memory %d: /memories lists %s", n, api.Count(len(res.Memories), "memory", "memories"))
		}
		return res.Memories[n-1].ID, nil
	}
	var found []string
	for _, mem := range res.Memories {
		if strings.HasPrefix(mem.ID, arg) {
			found = append(found, mem.ID)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return "", fmt.Errorf("no memory of this workspace has the ID %s: /memories lists them", arg)
	}
	return "", fmt.Errorf("%d memories have IDs that start with %s: give more of it, or the memory's number", len(found), arg)
}

// memoriesView lists the memories, numbered, oldest first, and says which a request sends.
func memoriesView(res api.MemoriesResult, width int) string {
	if len(res.Memories) == 0 {
		return "No memories for " + res.Workspace + " yet: the memory plugin saves them at each compaction (memory.enabled)."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Memories of %s, oldest first (new sessions start with them):\n", res.Workspace)
	from := len(res.Memories) - res.Sent
	ids := make([]string, len(res.Memories))
	for i, mem := range res.Memories {
		ids[i] = mem.ID
	}
	ids = uniqueIDs(ids) // what /memories delete takes: memories saved within a minute share their first 8
	for i, mem := range res.Memories {
		mark := ""
		if i < from {
			mark = " (not sent)"
		}
		fmt.Fprintf(&b, "%3d. %s%s  %s\n", i+1, clip(oneLine(mem.Text), max(20, width-30)), mark, ids[i])
	}
	if from > 0 {
		fmt.Fprintf(&b, "A request sends the newest %d, what memory.maxChars (%d) holds; /memories delete N removes one.", res.Sent, res.MaxChars)
	} else {
		b.WriteString("/memories delete N removes one.")
	}
	return b.String()
}
