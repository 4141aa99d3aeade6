// Package relevantfiles tracks the files that matter to a session — those the agent edited or read and those
// that changed in the workspace — and ranks them for the checkpoint's relevantFiles (SPEC D4). Watcher feeds
// it from a recursive fsnotify watch of the workspace.
package relevantfiles

import (
	"path"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Use is how a file came to matter; a higher use outranks a lower one.
type Use int

// Uses, from weakest to strongest.
const (
	Changed Use = iota + 1 // changed in the workspace (by anyone)
	Read                   // read by the agent
	Edited                 // written or edited by the agent
)

// String is the reason shown in the checkpoint's relevantFiles.
func (u Use) String() string {
	switch u {
	case Edited:
		return "edited by the agent"
	case Read:
		return "read by the agent"
	case Changed:
		return "changed in the workspace"
	}
	return "unknown"
}

// Entry is one tracked file.
type Entry struct {
	Path string `json:"path"`
	// Use is the strongest use seen; Last when the file was last used or changed.
	Use  Use       `json:"use"`
	Last time.Time `json:"last"`
	// Deleted is set when the file disappeared; deleted files are not ranked.
	Deleted bool `json:"deleted,omitempty"`
}

// Tracker records file uses. It is safe for concurrent use.
type Tracker struct {
	mu      sync.Mutex
	entries map[string]*Entry
	// dirs are the folders of the files the agent read or edited.
	dirs map[string]bool
	now  func() time.Time
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker {
	return &Tracker{entries: map[string]*Entry{}, dirs: map[string]bool{}, now: time.Now}
}

// Note records that path (relative to the workspace root) was used.
func (t *Tracker) Note(p string, use Use) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[p]
	if !ok {
		e = &Entry{Path: p}
		t.entries[p] = e
	}
	if use > e.Use {
		e.Use = use
	}
	if use >= Read {
		t.dirs[path.Dir(path.Clean(filepath.ToSlash(p)))] = true
	}
	e.Last, e.Deleted = t.now(), false
}

// Dirs lists the folders (slash-separated, as the files were noted) of the files the agent read or edited.
func (t *Tracker) Dirs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.dirs))
	for d := range t.dirs {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Removed records that path was deleted (or renamed away).
func (t *Tracker) Removed(path string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.entries[path]; ok {
		e.Deleted, e.Last = true, t.now()
	}
}

// Ranked returns up to limit files, edited before read before changed, most recent first within a kind;
// deleted files are left out.
func (t *Tracker) Ranked(limit int) []Entry {
	t.mu.Lock()
	out := make([]Entry, 0, len(t.entries))
	for _, e := range t.entries {
		if !e.Deleted {
			out = append(out, *e)
		}
	}
	t.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Use != out[j].Use {
			return out[i].Use > out[j].Use
		}
		if !out[i].Last.Equal(out[j].Last) {
			return out[i].Last.After(out[j].Last)
		}
		return out[i].Path < out[j].Path
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Deleted lists the tracked files that no longer exist.
func (t *Tracker) Deleted() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for p, e := range t.entries {
		if e.Deleted {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ChangedSince lists the tracked, existing files changed after ts (for example after a checkpoint).
func (t *Tracker) ChangedSince(ts time.Time) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for p, e := range t.entries {
		if !e.Deleted && e.Last.After(ts) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
