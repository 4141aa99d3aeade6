package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// systemOf is the instructions a Chat Completions request sent (its system message).
func systemOf(req map[string]any) string {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return ""
	}
	m, _ := msgs[0].(map[string]any)
	if m["role"] != "system" {
		return ""
	}
	text, _ := m["content"].(string)
	return text
}

// TestAgent_ProjectRules: AGENTS.md at the workspace root goes with the instructions of every request, read
// from disk (an edit applies to the next request), counted in the meter as the project rules; CLAUDE.md
// stands in where there is no AGENTS.md; a file over the limit is sent cut, with a notice that says so; an
// empty projectRules.files turns them off.
func TestAgent_ProjectRules(t *testing.T) {
	cfg := config.Default()
	cfg.ProjectRules.MaxChars = 1000
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{{Text: "one"}, {Text: "two"}, {Text: "three"}, {Text: "four"}}, Loop: true})
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(h.ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := h.session(t)
	ask := func() string {
		if _, err := h.agent.Prompt(context.Background(), id, "go on"); err != nil {
			t.Fatal(err)
		}
		reqs := h.server.Requests()
		return systemOf(reqs[len(reqs)-1])
	}
	write("CLAUDE.md", "Use tabs.")
	if sys := ask(); !strings.Contains(sys, "from CLAUDE.md at the workspace root") || !strings.Contains(sys, "Use tabs.") {
		t.Fatalf("CLAUDE.md without AGENTS.md:\n%s", sys)
	}
	write("AGENTS.md", "Never edit files under vendor/.")
	if sys := ask(); !strings.Contains(sys, "Never edit files under vendor/.") || strings.Contains(sys, "Use tabs.") {
		t.Fatalf("AGENTS.md first:\n%s", sys)
	}
	st, err := h.agent.Status(id)
	if err != nil || st.Rules == nil || st.Rules.File != "AGENTS.md" || st.Rules.Chars == 0 || st.Rules.Chars > st.InstructionsChars {
		t.Fatalf("the meter's rules: %+v (%v)", st.Rules, err)
	}
	write("AGENTS.md", "Always run gofmt.\n"+strings.Repeat("a long rule. ", 200))
	sys := ask()
	if !strings.Contains(sys, "Always run gofmt.") || strings.Contains(sys, "Never edit files under vendor/.") || !strings.Contains(sys, "more characters, left out") {
		t.Fatalf("an edited AGENTS.md over the limit:\n%.400s", sys)
	}
	if st, _ = h.agent.Status(id); st.Rules == nil || !st.Rules.Cut || st.Rules.FileChars <= st.Rules.Limit {
		t.Fatalf("the cut rules: %+v", st.Rules)
	}
	cfg.ProjectRules.Files = nil
	h.agent.SetSettings(cfg)
	if sys := ask(); strings.Contains(sys, "project's rules") {
		t.Fatalf("with projectRules.files empty:\n%.300s", sys)
	}
}
