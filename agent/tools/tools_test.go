package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func workspace(t *testing.T) (*Set, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	must(t, os.MkdirAll(filepath.Join(ws, "src"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "src", "a.go"), []byte("package a\n\nfunc A() {}\n// TODO fix\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("password"), 0o600))
	if runtime.GOOS != "windows" { // symlinks need a privilege on Windows (and Wine fakes them): tested on Unix
		must(t, os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(ws, "link-out")))
		must(t, os.Symlink(dir, filepath.Join(ws, "dir-out")))
		must(t, os.Symlink("src/a.go", filepath.Join(ws, "link-in")))
	}
	lim := DefaultLimits()
	lim.CommandTimeout = 2 * time.Second
	s, err := New(ws, lim)
	must(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, ws
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestTools_FileWork(t *testing.T) {
	s, ws := workspace(t)
	var uses []FileUse
	s.OnFile = func(u FileUse) { uses = append(uses, u) }
	ctx := context.Background()
	if out, isErr := s.Run(ctx, "read_file", `{"path":"src/a.go","startLine":3,"endLine":3}`); isErr || out != "func A() {}\n" {
		t.Fatalf("line range: %q", out)
	}
	if out, isErr := s.Run(ctx, "write_file", `{"path":"new/dir/b.txt","content":"hello"}`); isErr || !strings.Contains(out, "wrote") {
		t.Fatalf("write: %q", out)
	}
	if out, isErr := s.Run(ctx, "edit_file", `{"path":"src/a.go","oldText":"func A() {}","newText":"func A() int { return 1 }"}`); isErr {
		t.Fatalf("edit: %q", out)
	}
	raw, _ := os.ReadFile(filepath.Join(ws, "src", "a.go"))
	if !strings.Contains(string(raw), "return 1") {
		t.Fatal("edit not applied")
	}
	if out, isErr := s.Run(ctx, "edit_file", `{"path":"src/a.go","oldText":"nope","newText":"x"}`); !isErr || !strings.Contains(out, "not found") {
		t.Fatalf("missing oldText: %q", out)
	}
	if out, _ := s.Run(ctx, "search", `{"pattern":"TODO"}`); !strings.Contains(out, "src/a.go:4: // TODO fix") {
		t.Fatalf("search: %q", out)
	}
	if out, _ := s.Run(ctx, "list_dir", `{"path":"."}`); !strings.Contains(out, "src/\n") {
		t.Fatalf("list: %q", out)
	}
	if len(uses) != 3 || uses[0].Edited || !uses[1].Edited {
		t.Fatalf("file uses %+v", uses)
	}
}

func TestTools_BadCalls(t *testing.T) {
	s, _ := workspace(t)
	ctx := context.Background()
	for _, tc := range []struct{ name, args, want string }{
		{"delete_everything", `{}`, `unknown tool "delete_everything"`},
		{"read_file", `{"path":`, "not a JSON object"},
		{"read_file", `{"file":"a"}`, "invalid arguments for read_file"},
		{"read_file", `{"path":"src/a.go","startLine":0}`, "invalid arguments"},
		{"read_file", `{"path":"missing.txt"}`, "no such file"},
	} {
		if out, isErr := s.Run(ctx, tc.name, tc.args); !isErr || !strings.Contains(out, tc.want) {
			t.Errorf("%s %s: %q; want %q", tc.name, tc.args, out, tc.want)
		}
	}
}

func TestTools_LargeFilesAndDirectories(t *testing.T) {
	s, ws := workspace(t)
	f, err := os.Create(filepath.Join(ws, "huge.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(maxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if out, isErr := s.Run(context.Background(), "read_file", `{"path":"huge.log"}`); !isErr || !strings.Contains(out, "over the 32 MB") {
		t.Fatalf("huge file: %q", out)
	}
	if out, isErr := s.Run(context.Background(), "read_file", `{"path":"src"}`); !isErr || !strings.Contains(out, "is a directory") {
		t.Fatalf("directory: %q", out)
	}
	if out, _ := s.Run(context.Background(), "search", `{"pattern":"x"}`); strings.Contains(out, "huge.log") {
		t.Fatal("search read a file over the limit")
	}
}

// TestTools_KeepLineEndings: a file with Windows line endings keeps them when the model edits or rewrites it
// with \n, and its text is found whichever line endings the model's oldText has; other files stay as they are.
func TestTools_KeepLineEndings(t *testing.T) {
	s, ws := workspace(t)
	must(t, os.WriteFile(filepath.Join(ws, "win.txt"), []byte("one\r\ntwo\r\nthree\r\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "unix.txt"), []byte("one\ntwo\n"), 0o644))
	for _, call := range []struct{ name, args string }{
		{"edit_file", `{"path":"win.txt","oldText":"one\ntwo","newText":"1\n2\n2b"}`},
		{"edit_file", `{"path":"unix.txt","oldText":"two\n","newText":"2\n3\n"}`},
		{"write_file", `{"path":"new.txt","content":"a\nb\n"}`},
	} {
		if out, isErr := s.Run(context.Background(), call.name, call.args); isErr {
			t.Fatalf("%s %s: %s", call.name, call.args, out)
		}
	}
	for name, want := range map[string]string{"win.txt": "1\r\n2\r\n2b\r\nthree\r\n", "unix.txt": "one\n2\n3\n", "new.txt": "a\nb\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != want {
			t.Errorf("%s = %q, want %q", name, b, want)
		}
	}
	if out, isErr := s.Run(context.Background(), "write_file", `{"path":"win.txt","content":"x\ny\n"}`); isErr {
		t.Fatal(out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "win.txt")); string(b) != "x\r\ny\r\n" {
		t.Errorf("rewritten win.txt = %q", b)
	}
}

// TestReadFile_LongFileKeepsHeadAndTailAndSaysWhatToReadNext: a file longer than the output cap comes back
// as whole lines from its head and tail with a note naming the lines left out, and the ranged read the note
// names returns them.
func TestReadFile_LongFileKeepsHeadAndTailAndSaysWhatToReadNext(t *testing.T) {
	s, ws := workspace(t)
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %d of the long file\n", i)
	}
	must(t, os.WriteFile(filepath.Join(ws, "long.txt"), []byte(b.String()), 0o644))
	s.SetOutputChars(3000)
	out, isErr := s.Run(context.Background(), "read_file", `{"path":"long.txt"}`)
	if isErr || !strings.HasPrefix(out, "line 1 of the long file\n") || !strings.HasSuffix(out, "line 1000 of the long file\n") || len(out) > 3000 {
		t.Fatalf("%v %d chars: %.200q … %.200q", isErr, len(out), out, out[max(0, len(out)-200):])
	}
	var from, to, total int
	note := out[strings.Index(out, "[… lines"):]
	if _, err := fmt.Sscanf(note, "[… lines %d–%d of %d left out", &from, &to, &total); err != nil || total != 1000 || from < 2 || to <= from || to >= 1000 {
		t.Fatalf("note %.200q: %v", note, err)
	}
	if !strings.Contains(out, fmt.Sprintf("line %d of the long file\n[…", from-1)) || !strings.Contains(out, fmt.Sprintf("…]\nline %d of the long file", to+1)) {
		t.Fatalf("the note does not sit between lines %d and %d", from-1, to+1)
	}
	// The lines left out are more than one read returns whole: the note names the first range that does.
	var start, end int
	named := note[strings.Index(note, "startLine"):]
	if _, err := fmt.Sscanf(named, "startLine %d and endLine %d", &start, &end); err != nil || start != from || end <= start || end >= to {
		t.Fatalf("the range the note names: %.300q: %v", note, err)
	}
	rest, _ := s.Run(context.Background(), "read_file", fmt.Sprintf(`{"path":"long.txt","startLine":%d,"endLine":%d}`, start, end))
	if !strings.HasPrefix(rest, fmt.Sprintf("line %d of the long file\n", from)) || strings.Count(rest, "\n") != end-start+1 || strings.Contains(rest, "[…") {
		t.Fatalf("the ranged read the note names is cut again: %q", rest)
	}
	s.SetOutputChars(0) // back to the default cap: the whole file fits
	if out, _ := s.Run(context.Background(), "read_file", `{"path":"long.txt"}`); out != b.String() {
		t.Fatal("with the default cap the whole file comes back")
	}
}

// TestSearch_HugeLinesStayBounded: a search over files of one 31 MB line keeps each hit short (with a marker
// saying how to read the rest) and its memory near one file's size; it used to hold each matching line whole
// and convert the joined result to characters (2.2 GB for 10 such files).
func TestSearch_HugeLinesStayBounded(t *testing.T) {
	s, ws := workspace(t)
	line := bytes.Repeat([]byte("needle "), 31<<20/7)
	for i := range 10 {
		must(t, os.WriteFile(filepath.Join(ws, fmt.Sprintf("min%d.js", i)), line, 0o644))
	}
	var before, peak runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out, isErr := s.Run(context.Background(), "search", `{"pattern":"needle"}`)
	runtime.ReadMemStats(&peak)
	if isErr || strings.Count(out, "\n") != 9 || !strings.Contains(out, "more bytes on this line: read_file shows it") || len(out) > 10*(maxHitChars+200) {
		t.Fatalf("search over huge lines (%d bytes): %.300s", len(out), out)
	}
	if grown := int64(peak.TotalAlloc - before.TotalAlloc); grown > 1<<30 {
		t.Fatalf("the search allocated %d MiB for 310 MB of files", grown>>20)
	}
}

// TestTools_NamesWithALineBreakAreQuoted: a file name holding a newline is shown quoted by list_dir and
// search, so that one file never reads as two.
func TestTools_NamesWithALineBreakAreQuoted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold a newline")
	}
	s, ws := workspace(t)
	must(t, os.WriteFile(filepath.Join(ws, "two\nlines.txt"), []byte("needle\n"), 0o644))
	out, _ := s.Run(context.Background(), "list_dir", `{"path":"."}`)
	if !strings.Contains(out, `"two\nlines.txt"`) {
		t.Fatalf("list_dir: %q", out)
	}
	out, _ = s.Run(context.Background(), "search", `{"pattern":"needle"}`)
	if out != `"two\nlines.txt":1: needle` {
		t.Fatalf("search: %q", out)
	}
}

// TestWrite_StaleTemporaryFilesAreRemoved: a temporary file an interrupted write left beside a file (a crash
// between its creation and its rename) is removed by the next write of that file; a recent one, maybe a write
// still running, is left alone.
func TestWrite_StaleTemporaryFilesAreRemoved(t *testing.T) {
	s, ws := workspace(t)
	stale := filepath.Join(ws, "src", ".a.go.alisio-1.tmp")
	fresh := filepath.Join(ws, "src", ".a.go.alisio-2.tmp")
	must(t, os.WriteFile(stale, []byte("half"), 0o600))
	must(t, os.WriteFile(fresh, []byte("running"), 0o600))
	old := time.Now().Add(-2 * staleTemp)
	must(t, os.Chtimes(stale, old, old))
	if out, isErr := s.Run(context.Background(), "write_file", `{"path":"src/a.go","content":"package a\n"}`); isErr {
		t.Fatal(out)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("the stale temporary file is still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a recent temporary file was removed: %v", err)
	}
}
