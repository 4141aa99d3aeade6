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
	if sys := ask(); !strings.Contains(sys, "From CLAUDE.md at the workspace root") || !strings.Contains(sys, "Use tabs.") {
		t.Fatalf("CLAUDE.md without AGENTS.md:\n%s", sys)
	}
	write("AGENTS.md", "Never edit files under vendor/.")
	if sys := ask(); !strings.Contains(sys, "Never edit files under vendor/.") || strings.Contains(sys, "Use tabs.") {
		t.Fatalf("AGENTS.md first:\n%s", sys)
	}
	st, err := h.agent.Status(id)
	if err != nil || st.Rules == nil || st.Rules.File != "AGENTS.md" || len(st.Rules.Files) != 1 || st.Rules.Chars == 0 || st.Rules.Chars > st.InstructionsChars {
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

// TestAgent_FolderRules: an AGENTS.md in a folder applies from the request after the agent read or edited a
// file below it (its parent folders' too), after the root's, for as long as the daemon runs (the files the
// agent used are tracked apart from the transcript, so a compaction does not remove them); a folder the agent
// did not touch sends nothing.
func TestAgent_FolderRules(t *testing.T) {
	cfg := config.Default()
	h := newHarness(t, cfg, providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{{ID: "r1", Name: "read_file", Arguments: `{"path":"parser/lex/lex.go"}`}}},
		{Text: "read it"}, {Text: "more"}}, Loop: true})
	for name, text := range map[string]string{
		"AGENTS.md": "Root rule.", "parser/AGENTS.md": "Parser rule.", "parser/lex/lex.go": "package lex\n",
		"docs/AGENTS.md": "Docs rule.",
	} {
		full := filepath.Join(h.ws, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	id := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), id, "read the lexer"); err != nil {
		t.Fatal(err)
	}
	reqs := h.server.Requests()
	if first := systemOf(reqs[0]); !strings.Contains(first, "Root rule.") || strings.Contains(first, "Parser rule.") {
		t.Fatalf("before the read:\n%s", first)
	}
	after := systemOf(reqs[len(reqs)-1])
	if !strings.Contains(after, "From parser/AGENTS.md, for the files in parser/") || strings.Index(after, "Root rule.") > strings.Index(after, "Parser rule.") || strings.Contains(after, "Docs rule.") {
		t.Fatalf("after reading parser/lex/lex.go:\n%s", after)
	}
	st, err := h.agent.Status(id)
	if err != nil || st.Rules == nil || strings.Join(st.Rules.Files, ",") != "AGENTS.md,parser/AGENTS.md" {
		t.Fatalf("the meter's rules: %+v (%v)", st.Rules, err)
	}
}
