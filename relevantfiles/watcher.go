package relevantfiles

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// DefaultDebounce is how long a burst of events on one path is coalesced (gopls uses 500 ms).
const DefaultDebounce = 500 * time.Millisecond

// skipped directories are never watched.
var skipped = map[string]bool{".git": true, "node_modules": true, "vendor": true}

// ErrWatchLimit reports that the system's inotify limits, or MaxDirectories, were reached; the caller should
// fall back to client-side watching (workspace/didChangeWatchedFiles).
var ErrWatchLimit = errors.New("the file watch limit was reached")

// MaxDirectories bounds how many directories one watcher adds, so that a daemon started on a home directory
// neither walks it all nor exhausts the system's watches.
var MaxDirectories = 20_000

// Watcher watches a workspace recursively and reports changed and removed files to a Tracker, debounced.
type Watcher struct {
	root     string
	tracker  *Tracker
	log      *zap.Logger
	w        *fsnotify.Watcher
	debounce time.Duration
	ignore   []string

	dirs    int // directories added so far (only the walking goroutine touches it)
	mu      sync.Mutex
	pending map[string]bool // path → removed
	timer   *time.Timer
	done    chan struct{}
	// OnFlush, when set, is called after each debounced batch with the paths it reported.
	OnFlush func(paths []string)
}

// Watch starts watching root (absolute). It returns ErrWatchLimit (wrapped) when the system limits stop it
// from watching every directory; the watcher then keeps what it could add.
func Watch(root string, tracker *Tracker, debounce time.Duration, log *zap.Logger) (*Watcher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, classify(err)
	}
	w := &Watcher{root: root, tracker: tracker, log: log, w: fw, debounce: debounce, pending: map[string]bool{},
		done: make(chan struct{}), ignore: readGitignore(root)}
	addErr := w.addTree(root)
	go w.loop()
	return w, addErr
}

// Close stops watching.
func (w *Watcher) Close() error {
	err := w.w.Close()
	<-w.done
	return err
}

func classify(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || strings.Contains(err.Error(), "no space left") ||
		strings.Contains(err.Error(), "too many open files") {
		return errors.Join(ErrWatchLimit, err)
	}
	return err
}

// ignored reports whether rel (slash-separated, relative to the root) is skipped.
func (w *Watcher) ignored(rel string, dir bool) bool {
	for _, part := range strings.Split(rel, "/") {
		if skipped[part] {
			return true
		}
	}
	base := filepath.Base(rel)
	for _, pat := range w.ignore {
		p := strings.TrimSuffix(pat, "/")
		if strings.HasSuffix(pat, "/") && !dir {
			continue
		}
		if strings.Contains(p, "/") {
			if ok, _ := filepath.Match(strings.TrimPrefix(p, "/"), rel); ok {
				return true
			}
			continue
		}
		if ok, _ := filepath.Match(p, base); ok {
			return true
		}
	}
	return false
}

// readGitignore reads the root's .gitignore (simple patterns: names, globs, dir/, /anchored; no negation).
func readGitignore(root string) []string {
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "!") {
			continue
		}
		out = append(out, l)
	}
	return out
}

func (w *Watcher) rel(path string) string {
	r, err := filepath.Rel(w.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// addTree watches dir and every directory under it that is not ignored.
func (w *Watcher) addTree(dir string) error {
	var firstErr error
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if path != w.root && w.ignored(w.rel(path), true) {
			return filepath.SkipDir
		}
		if w.dirs >= MaxDirectories {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: the workspace has more than %d directories", ErrWatchLimit, MaxDirectories)
			}
			return filepath.SkipAll
		}
		w.dirs++
		if err := w.w.Add(path); err != nil {
			err = classify(err)
			if firstErr == nil {
				firstErr = err
			}
			if errors.Is(err, ErrWatchLimit) {
				return filepath.SkipAll
			}
		}
		return nil
	})
	return firstErr
}

func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				w.log.Warn("file watcher queue overflowed; some workspace changes were missed")
				continue
			}
			w.log.Warn("file watcher error", zap.Error(err))
		}
	}
}

func (w *Watcher) handle(ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	rel := w.rel(ev.Name)
	info, statErr := os.Lstat(ev.Name)
	isDir := statErr == nil && info.IsDir()
	if w.ignored(rel, isDir) {
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		// A rename is a removal of the old name; the new name arrives as a Create (atomic saves).
		if statErr != nil {
			w.queue(rel, true)
		}
	case ev.Has(fsnotify.Create) && isDir:
		// A new directory: watch it and report the files it already holds.
		if err := w.addTree(ev.Name); err != nil {
			w.log.Warn("could not watch a new directory", zap.String("dir", rel), zap.Error(err))
		}
		_ = filepath.WalkDir(ev.Name, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !w.ignored(w.rel(path), false) {
				w.queue(w.rel(path), false)
			}
			return nil
		})
	case statErr == nil && !isDir:
		w.queue(rel, false)
	}
}

func (w *Watcher) queue(rel string, removed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[rel] = removed
	if w.timer == nil {
		w.timer = time.AfterFunc(w.debounce, w.flush)
	}
}

func (w *Watcher) flush() {
	w.mu.Lock()
	batch := w.pending
	w.pending, w.timer = map[string]bool{}, nil
	w.mu.Unlock()
	paths := make([]string, 0, len(batch))
	for p := range batch {
		// Re-check: a file removed and re-created in the burst (an atomic save) is a change.
		if _, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(p))); err != nil {
			w.tracker.Removed(p)
		} else {
			w.tracker.Note(p, Changed)
		}
		paths = append(paths, p)
	}
	if w.OnFlush != nil && len(paths) > 0 {
		w.OnFlush(paths)
	}
}
