package agent

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ProjectRules are the workspace's rules for agents as a request sends them: the rules file at the workspace
// root (AGENTS.md, or the first of projectRules.files that exists there), then the rules file of each folder
// below which the agent has read or edited a file (as Codex does), read from disk, so that an edit applies to
// the next request. They are instructions: never summarized, never reduced, and a compaction does not remove
// a folder's rules. Text is empty when there are none.
type ProjectRules struct {
	// File names the files sent, joined ("AGENTS.md, parser/AGENTS.md"); Files lists them, the root's first.
	File  string   `json:"file,omitempty"`
	Files []string `json:"files,omitempty"`
	// Text is what requests send (a heading, then each file, cut when the files are over Limit together);
	// Chars its size, FileChars the files'.
	Text      string `json:"-"`
	Chars     int    `json:"chars,omitempty"`
	FileChars int    `json:"fileChars,omitempty"`
	// Limit is the most of the files a request sends; Cut says they are over it.
	Limit int  `json:"limit,omitempty"`
	Cut   bool `json:"cut,omitempty"`
}

// rulesFiles keeps each rules file as last read, while its size and time do not change.
type rulesFiles struct {
	mu    sync.Mutex
	files map[string]rulesFile
}

// rulesFile is one rules file as last read.
type rulesFile struct {
	size  int64
	mod   time.Time
	text  string
	chars int
}

// read returns path's text, from the copy kept while the file's size and modification time are those it had.
func (f *rulesFiles) read(path string, info os.FileInfo) (string, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.files[path]; ok && c.size == info.Size() && c.mod.Equal(info.ModTime()) {
		return c.text, c.chars, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	c := rulesFile{size: info.Size(), mod: info.ModTime(), text: strings.ToValidUTF8(string(raw), "\uFFFD")}
	c.chars = utf8.RuneCountInString(c.text)
	if f.files == nil {
		f.files = map[string]rulesFile{}
	}
	f.files[path] = c
	return c.text, c.chars, nil
}

// rulesIn finds the rules file of folder dir (slash-separated, relative to the workspace; "" for the root):
// the first of names that exists there and is not blank.
func (m *ContextManager) rulesIn(dir string, names []string) (name, text string, chars int, ok bool) {
	for _, n := range names {
		rel := path.Join(dir, n)
		full := filepath.Join(m.Workspace, filepath.FromSlash(rel))
		info, err := os.Stat(full)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		if text, chars, err := m.rules.read(full, info); err == nil && strings.TrimSpace(text) != "" {
			return rel, text, chars, true
		}
	}
	return "", "", 0, false
}

// ruleDirs are the folders below the workspace root whose rules apply: those holding a file the agent read or
// edited, and the folders between them and the root, shallowest first.
func (m *ContextManager) ruleDirs() []string {
	if m.Files == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, d := range m.Files.Dirs() {
		for ; d != "." && d != "/" && d != "" && !seen[d] && !strings.HasPrefix(d, ".."); d = path.Dir(d) {
			seen[d] = true
		}
	}
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Slice(dirs, func(i, j int) bool {
		if a, b := strings.Count(dirs[i], "/"), strings.Count(dirs[j], "/"); a != b {
			return a < b
		}
		return dirs[i] < dirs[j]
	})
	return dirs
}

// Rules are the workspace's project rules for the settings in force (none when projectRules.files is empty,
// no file exists, or the context manager has no workspace). The files share projectRules.maxChars (at most a
// tenth of limits.maxContextChars), the root's first; what is over it is left out with a notice.
func (m *ContextManager) Rules() ProjectRules {
	cfg := m.Settings()
	if m.Workspace == "" || len(cfg.ProjectRules.Files) == 0 {
		return ProjectRules{}
	}
	r := ProjectRules{Limit: min(cfg.ProjectRules.MaxChars, cfg.Limits.MaxContextChars/10)}
	room := r.Limit
	var sections []string
	for _, dir := range append([]string{""}, m.ruleDirs()...) {
		name, text, chars, ok := m.rulesIn(dir, cfg.ProjectRules.Files)
		if !ok {
			continue
		}
		r.Files = append(r.Files, name)
		r.FileChars += chars
		body := strings.TrimSpace(text)
		if chars > room {
			r.Cut = true
			body = string([]rune(text)[:room]) + fmt.Sprintf("\n[… %s goes on for %d more characters, left out: the project's rules files are over the %d characters a request sends of them]", name, chars-room, r.Limit)
		}
		room -= min(chars, room)
		if dir == "" {
			sections = append(sections, fmt.Sprintf("From %s at the workspace root:\n\n%s", name, body))
		} else {
			sections = append(sections, fmt.Sprintf("From %s, for the files in %s/ and below it (over the rules above where they differ):\n\n%s", name, dir, body))
		}
	}
	if len(r.Files) == 0 {
		return ProjectRules{}
	}
	r.File = strings.Join(r.Files, ", ")
	r.Text = "The project's rules for agents (follow them; they come from the user).\n\n" + strings.Join(sections, "\n\n")
	r.Chars = utf8.RuneCountInString(r.Text)
	return r
}
