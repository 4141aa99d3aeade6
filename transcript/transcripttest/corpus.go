package transcripttest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// CorpusFile is one transcript file that tests import: a fixture written for this repository (always
// present) or a real public transcript from ../shared/transcripts (present beside the project's own checkout
// and in CI, absent in a user's clone).
type CorpusFile struct {
	// Name is the file's base name; Path is where to read it.
	Name, Path string
	// Shared is true for the public transcripts of ../shared/transcripts.
	Shared bool
	// Format is the format the importer must detect ("openai" or "anthropic").
	Format string
	// Messages (0: not checked), Instructions, Calls (tool calls, counting a reused ID each time) and
	// Pending (calls left without a result) are what the import must give.
	Messages, Instructions, Calls, Pending int
}

// corpus lists every known file; the shared ones are used only when present.
var corpus = []CorpusFile{
	{Name: "openai-chat-array.json", Format: "openai", Messages: 48, Instructions: 1, Calls: 18},
	{Name: "mini-swe-agent.traj.json", Format: "openai", Messages: 24, Instructions: 1, Calls: 12, Pending: 1},
	{Name: "claude-code.jsonl", Format: "anthropic", Messages: 24, Calls: 8},
	{Name: "swe-agent-demo.traj", Format: "openai", Messages: 18, Instructions: 1, Calls: 8},
	{Name: "anthropic-thinking.json", Format: "anthropic", Messages: 16, Instructions: 1, Calls: 4},
	{Name: "openhands-fncall-llm-message.json", Shared: true, Format: "openai", Messages: 13, Instructions: 1, Calls: 6},
	{Name: "mini-swe-agent-deepseek-sqlfluff-1763.traj.json", Shared: true, Format: "openai", Messages: 200, Instructions: 1, Calls: 100, Pending: 1},
	{Name: "claude-code-5c0375b4.jsonl", Shared: true, Format: "anthropic", Calls: 13}, // 8 more in skipped sub-agent records
}

var sharedNote sync.Once

// Corpus returns the repository's fixtures (testdata/transcripts) and, when ../shared/transcripts exists
// beside the checkout, the public transcripts too; their absence is logged, not a failure.
func Corpus(t testing.TB) []CorpusFile {
	t.Helper()
	root := moduleRoot(t)
	own := filepath.Join(root, "testdata", "transcripts")
	shared := filepath.Join(root, "..", "shared", "transcripts")
	_, err := os.Stat(shared)
	haveShared := err == nil
	var out []CorpusFile
	for _, f := range corpus {
		switch {
		case !f.Shared:
			f.Path = filepath.Join(own, f.Name)
		case haveShared:
			f.Path = filepath.Join(shared, f.Name)
		default:
			sharedNote.Do(func() {
				t.Logf("note: %s is absent (a clone without ../shared): only the repository's own fixtures are read", shared)
			})
			continue
		}
		out = append(out, f)
	}
	return out
}

// Read returns the file's bytes or fails the test.
func (f CorpusFile) Read(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatalf("reading transcript fixture: %v", err)
	}
	return b
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
