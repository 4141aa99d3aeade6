package chat

import (
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// TestMemoriesView: the memories are numbered oldest first, those memory.maxChars leaves out are marked, and
// a memory is named by its number or the start of its ID, with words for a name that fits none or several.
func TestMemoriesView(t *testing.T) {
	res := api.MemoriesResult{Workspace: "/ws", Sent: 2, MaxChars: 4000, Memories: []storage.Memory{
		{ID: "01AAAAAAAAAA", Text: "Use tabs."}, {ID: "01AAAAAAAABB", Text: "Tests run with make test."}, {ID: "01CCCCCCCCCC", Text: "Never push to main."}}}
	v := memoriesView(res, 80)
	for _, want := range []string{"  1. Use tabs. (not sent)", "  2. Tests run with make test.  ", "  3. Never push to main.", "sends the newest 2, what memory.maxChars (4000) holds"} {
		if !strings.Contains(v, want) {
			t.Errorf("the list lacks %q:\n%s", want, v)
		}
	}
	// The IDs shown are what /memories delete takes: each names its memory alone, though two share their first 8.
	for _, mem := range res.Memories {
		shown := ""
		for _, l := range strings.Split(v, "\n") {
			if strings.Contains(l, mem.Text) {
				shown = l[strings.LastIndex(l, " ")+1:]
			}
		}
		if id, err := memoryNamed(res, shown); err != nil || id != mem.ID {
			t.Errorf("the ID shown for %q, %q, names %q (%v)", mem.Text, shown, id, err)
		}
	}
	if strings.Contains(v, "make test. (not sent)") {
		t.Errorf("a memory that is sent is marked:\n%s", v)
	}
	if v := memoriesView(api.MemoriesResult{Workspace: "/ws"}, 80); !strings.Contains(v, "No memories for /ws yet") {
		t.Errorf("no memories: %q", v)
	}
	for arg, want := range map[string]string{"2": "01AAAAAAAABB", "01C": "01CCCCCCCCCC"} {
		if id, err := memoryNamed(res, arg); err != nil || id != want {
			t.Errorf("%s names %q (%v), want %s", arg, id, err, want)
		}
	}
	for arg, want := range map[string]string{"4": "there is no memory 4: /memories lists 3 memories", "01A": "2 memories have IDs that start with 01A", "zz": "no memory of this workspace has the ID zz"} {
		if _, err := memoryNamed(res, arg); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", arg, err, want)
		}
	}
}
