package chat

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/glamour"
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
