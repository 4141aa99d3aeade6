package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ProjectRules are the workspace's rules for agents as a request sends them: from File (AGENTS.md, or the
// first of projectRules.files that exists at the workspace root), read from disk, so that an edit applies to
// the next request. They are instructions: never summarized, never reduced. Text is empty when there is none.
type ProjectRules struct {
	File string `json:"file,omitempty"`
	// Text is what requests send (a heading, then the file, its start only when it is over Limit); Chars its
	// size, FileChars the file's.
	Text      string `json:"-"`
	Chars     int    `json:"chars,omitempty"`
	FileChars int    `json:"fileChars,omitempty"`
	// Limit is the most of the file a request sends; Cut says the file is over it.
	Limit int  `json:"limit,omitempty"`
	Cut   bool `json:"cut,omitempty"`
}

// rulesFile is the project rules' file as last read, kept while its size and time do not change.
type rulesFile struct {
	mu    sync.Mutex
	path  string
	size  int64
	mod   time.Time
	text  string
	chars int
}

// read returns path's text, from the copy kept while the file's size and modification time are those it had.
func (f *rulesFile) read(path string, info os.FileInfo) (string, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.path == path && f.size == info.Size() && f.mod.Equal(info.ModTime()) {
		return f.text, f.chars, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	f.path, f.size, f.mod, f.text = path, info.Size(), info.ModTime(), strings.ToValidUTF8(string(raw), "\uFFFD")
	f.chars = utf8.RuneCountInString(f.text)
	return f.text, f.chars, nil
}

// Rules are the workspace's project rules for the settings in force (none when projectRules.files is empty,
// no file exists, or the context manager has no workspace).
func (m *ContextManager) Rules() ProjectRules {
	cfg := m.Settings()
	if m.Workspace == "" {
		return ProjectRules{}
	}
	for _, name := range cfg.ProjectRules.Files {
		path := filepath.Join(m.Workspace, filepath.FromSlash(name))
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		text, chars, err := m.rules.read(path, info)
		if err != nil || strings.TrimSpace(text) == "" {
			continue
		}
		limit := cfg.ProjectRules.MaxChars
		if hard := cfg.Limits.MaxContextChars / 10; hard < limit {
			limit = hard
		}
		r := ProjectRules{File: filepath.ToSlash(name), FileChars: chars, Limit: limit}
		body := text
		if chars > limit {
			r.Cut = true
			body = string([]rune(text)[:limit]) + fmt.Sprintf("\n[… %s goes on for %d more characters, left out: it is over the %d a request sends]", r.File, chars-limit, limit)
		}
		r.Text = fmt.Sprintf("The project's rules for agents, from %s at the workspace root (follow them; they come from the user):\n\n%s", r.File, strings.TrimSpace(body))
		r.Chars = utf8.RuneCountInString(r.Text)
		return r
	}
	return ProjectRules{}
}
