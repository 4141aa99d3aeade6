package relevantfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

func TestTracker_Ranking(t *testing.T) {
	tr := NewTracker()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tr.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	tr.Note("changed.txt", Changed)
	tr.Note("read-old.go", Read)
	tr.Note("edited.go", Edited)
	tr.Note("read-new.go", Read)
	tr.Note("edited.go", Read) // a weaker use never demotes
	tr.Note("gone.go", Edited)
	tr.Removed("gone.go")
	var got []string
	for _, e := range tr.Ranked(0) {
		got = append(got, e.Path)
	}
	want := []string{"edited.go", "read-new.go", "read-old.go", "changed.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ranking %v; want %v", got, want)
	}
	if d := tr.Deleted(); !reflect.DeepEqual(d, []string{"gone.go"}) {
		t.Fatalf("deleted %v", d)
	}
	if r := tr.Ranked(2); len(r) != 2 {
		t.Fatal("limit")
	}
	mark := clock
	tr.Note("read-old.go", Changed)
	if c := tr.ChangedSince(mark); !reflect.DeepEqual(c, []string{"read-old.go"}) {
		t.Fatalf("changed since %v", c)
	}
}

// waitFor polls the tracker until cond holds; the watcher is asynchronous and debounced.
func waitFor(t *testing.T, flushed <-chan []string, cond func() bool, what string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !cond() {
		select {
		case <-flushed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func startWatcher(t *testing.T, root string) (*Tracker, <-chan []string) {
	t.Helper()
	tr := NewTracker()
	w, err := Watch(root, tr, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan []string, 100)
	var once sync.Once
	w.OnFlush = func(p []string) { ch <- p }
	t.Cleanup(func() { once.Do(func() { _ = w.Close() }) })
	return tr, ch
}

func has(tr *Tracker, path string) bool {
	for _, e := range tr.Ranked(0) {
		if e.Path == path {
			return true
		}
	}
	return false
}

func TestWatcher_FilesDirectoriesRenamesAndIgnores(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".gitignore", "*.log\nbuild/\n")
	write("src/a.go", "a")
	for _, d := range []string{".git", "node_modules/x", "build"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tr, flushed := startWatcher(t, root)

	write("src/a.go", "changed")
	waitFor(t, flushed, func() bool { return has(tr, "src/a.go") }, "a change")

	// A new directory with files in it, created before the watch on it exists.
	write("newdir/deep/b.go", "b")
	waitFor(t, flushed, func() bool { return has(tr, "newdir/deep/b.go") }, "a file in a new directory")
	write("newdir/deep/c.go", "c")
	waitFor(t, flushed, func() bool { return has(tr, "newdir/deep/c.go") }, "a later file in the new directory")

	// An atomic save: write a temp file and rename it over the original.
	write("src/a.go.tmp", "saved")
	if err := os.Rename(filepath.Join(root, "src/a.go.tmp"), filepath.Join(root, "src/a.go")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, flushed, func() bool { return has(tr, "src/a.go") && !has(tr, "src/a.go.tmp") }, "an atomic save")

	// Delete and rename away.
	if err := os.Remove(filepath.Join(root, "newdir/deep/b.go")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "newdir/deep/c.go"), filepath.Join(root, "newdir/deep/d.go")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, flushed, func() bool {
		return !has(tr, "newdir/deep/b.go") && !has(tr, "newdir/deep/c.go") && has(tr, "newdir/deep/d.go")
	}, "removals")

	// Ignored paths never show up.
	write(".git/HEAD", "x")
	write("node_modules/x/i.js", "x")
	write("build/out.bin", "x")
	write("debug.log", "x")
	write("src/marker.go", "m")
	waitFor(t, flushed, func() bool { return has(tr, "src/marker.go") }, "the marker")
	for _, p := range []string{".git/HEAD", "node_modules/x/i.js", "build/out.bin", "debug.log"} {
		if has(tr, p) {
			t.Errorf("ignored path %s was reported", p)
		}
	}
}

func TestWatcher_LargeTree(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10k files")
	}
	root := t.TempDir()
	for d := 0; d < 100; d++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	start := time.Now()
	tr, flushed := startWatcher(t, root)
	t.Logf("watching 10k files in 100 directories took %v", time.Since(start))
	if err := os.WriteFile(filepath.Join(root, "pkg099", "f099.go"), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, flushed, func() bool { return has(tr, "pkg099/f099.go") }, "a change deep in the tree")
	if len(tr.Ranked(0)) != 1 {
		t.Fatalf("%d files reported; want only the changed one", len(tr.Ranked(0)))
	}
}

func TestWatcher_DirectoryCap(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 30; i++ {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%02d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	old := MaxDirectories
	MaxDirectories = 10
	defer func() { MaxDirectories = old }()
	w, err := Watch(root, NewTracker(), 50*time.Millisecond, nil)
	if !errors.Is(err, ErrWatchLimit) {
		t.Fatalf("a tree over the cap: %v", err)
	}
	if w == nil {
		t.Fatal("the watcher must keep what it could add")
	}
	_ = w.Close()
}
