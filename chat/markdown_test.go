package chat

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/lipgloss"
)

// TestMarkdownInlineCode: inline code in a reply is marked by its colours, not padded with spaces (which read
// as doubled spaces between words and as a space before the punctuation that follows).
func TestMarkdownInlineCode(t *testing.T) {
	md, err := glamour.NewTermRenderer(glamour.WithStyles(markdownStyle(false)), glamour.WithWordWrap(66))
	if err != nil {
		t.Fatal(err)
	}
	out, err := md.Render("The entry point `main` in `main.go` calls `greet(name)`.")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.TrimSpace(regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(out, ""))
	if text != "The entry point main in main.go calls greet(name)." {
		t.Errorf("drawn as %q", text)
	}
	if plain := markdownStyle(true); plain.Code.BlockPrefix != "`" {
		t.Errorf("without colours, inline code is not marked: %+v", plain.Code)
	}
}

// TestMarkdownNoStrayWords: a paragraph is wrapped once: no line of a word alone in its middle (glamour wraps a
// line broken at a hyphen one cell too long, and its block wraps that again, leaving the last word alone).
func TestMarkdownNoStrayWords(t *testing.T) {
	text := "(scripted test model) Above are the real results of two tools run in your workspace: its top-level entries and the lines that say TODO. This reply itself is canned: the test model answers every prompt from a script, whatever you ask. Point provider.baseURL at a real model (OpenAI, Ollama, llama.cpp, vLLM, LM Studio, OpenRouter) for real answers. A well-known, long-standing, hard-to-find bug."
	strip := regexp.MustCompile(`\x1b\[[0-9;]*m`)
	for width := 60; width <= 220; width++ {
		m := newModel(context.Background(), nil, Options{})
		m.resize(width, 30)
		lines := strings.Split(strip.ReplaceAllString(m.markdown(text), ""), "\n")
		for i, l := range lines[:len(lines)-1] {
			if words := strings.Fields(l); len(words) == 1 {
				t.Errorf("at %d columns line %d is a word alone: %q", width, i+1, l)
			}
			if w := lipgloss.Width(strings.TrimRight(l, " ")); w > width-4 {
				t.Errorf("at %d columns line %d is %d wide", width, i+1, w)
			}
		}
		if got := strings.Join(strings.Fields(strings.Join(lines, " ")), " "); !strings.Contains(got, "top-level entries") || !strings.Contains(got, "A well-known, long-standing, hard-to-find bug.") {
			t.Errorf("at %d columns the text changed: %q", width, got)
		}
	}
}
