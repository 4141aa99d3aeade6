package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func openTemp(t testing.TB) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, dir
}

// sameMessages compares transcripts ignoring the time zone of CreatedAt (JSON round trips drop monotonic clocks).
func sameMessages(t *testing.T, got, want []transcript.Message) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d messages; want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("message %d: created %v; want %v", i, g.CreatedAt, w.CreatedAt)
		}
		g.CreatedAt = w.CreatedAt
		g.Measure() // the cached count is not part of the message
		w.Measure()
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("message %d differs:\n got  %+v\n want %+v", i, g, w)
		}
	}
}

func TestStore_CreateAppendReadBack(t *testing.T) {
	s, dir := openTemp(t)
	msgs := synthetic.Generate(synthetic.Default(300))
	sess, err := s.CreateSession(Session{Title: "fix", Workspace: "/w", Instructions: []string{"be brief"}}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	added, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "más ☃"})
	if err != nil {
		t.Fatal(err)
	}
	if added[0].ID == "" || added[0].CreatedAt.IsZero() {
		t.Fatalf("append did not assign ID and time: %+v", added[0])
	}
	want := append(append([]transcript.Message{}, msgs...), added...)
	s2 := reopen(t, s, dir)
	defer s2.Close()
	v, err := s2.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, v.Messages, want)
	if v.Session.Title != "fix" || v.Session.Workspace != "/w" || v.Session.Instructions[0] != "be brief" {
		t.Fatalf("session record lost fields: %+v", v.Session)
	}
	verify(t, s2, sess.ID)
	h, err := s2.History(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, h, want)
}

func TestStore_ApplyRewriteKeepsOriginalsAsCompacted(t *testing.T) {
	s, _ := openTemp(t)
	msgs := synthetic.Generate(synthetic.Default(100))
	sess, err := s.CreateSession(Session{Workspace: "/w"}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Transcript(sess.ID)
	reduced := v.Messages[80]
	reduced.ID, reduced.OriginalID, reduced.Truncated, reduced.Text = "", v.Messages[80].ID, true, "cut"
	rw := transcript.Rewrite{
		BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: 60,
		Insert:  []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}},
		Replace: map[int]transcript.Message{80: reduced},
	}
	if _, err := s.Apply(sess.ID, rw); err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	after, _ := s.Transcript(sess.ID)
	want := rw.Apply(v.Messages)
	if len(after.Messages) != len(want) || !after.Messages[0].Summary || after.Messages[21].Text != "cut" ||
		after.Messages[21].OriginalID != msgs[80].ID {
		t.Fatalf("rewrite not applied as planned: %d messages", len(after.Messages))
	}
	for i := 1; i < len(want); i++ {
		if i != 21 && after.Messages[i].ID != want[i].ID {
			t.Fatalf("kept message %d changed", i)
		}
	}
	h, _ := s.History(sess.ID)
	if len(h) != len(msgs)+2 {
		t.Fatalf("history has %d messages; want %d (originals + checkpoint + reduced copy)", len(h), len(msgs)+2)
	}
	compacted := 0
	for i, m := range h {
		if m.Compacted {
			compacted++
			if i >= 60 && i != 80 {
				t.Fatalf("kept message %d marked compacted", i)
			}
		}
	}
	if compacted != 61 {
		t.Fatalf("%d messages marked compacted; want 61", compacted)
	}
	// The same plan again is stale.
	if _, err := s.Apply(sess.ID, rw); !errors.Is(err, ErrStale) {
		t.Fatalf("reapplying a stale rewrite: %v; want ErrStale", err)
	}
	// A rewrite of the new view works and compacts the old checkpoint.
	rw2 := transcript.Rewrite{BaseEpoch: after.Session.Head.Epoch, BaseLen: len(after.Messages), Drop: 10,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint 2"}}}
	if _, err := s.Apply(sess.ID, rw2); err != nil {
		t.Fatal(err)
	}
	final, _ := s.Transcript(sess.ID)
	if final.Messages[0].Text != "checkpoint 2" || len(final.Messages) != len(after.Messages)-9 {
		t.Fatalf("second rewrite: %d messages, first %q", len(final.Messages), final.Messages[0].Text)
	}
	verify(t, s, sess.ID)
}

func TestStore_ApplyRejectsBadPlans(t *testing.T) {
	s, _ := openTemp(t)
	sess, _ := s.CreateSession(Session{}, synthetic.Generate(synthetic.Default(20)))
	for name, rw := range map[string]transcript.Rewrite{
		"drop past end":     {BaseLen: sess.Head.ViewLen, Drop: sess.Head.ViewLen + 1},
		"replace dropped":   {BaseLen: sess.Head.ViewLen, Drop: 5, Replace: map[int]transcript.Message{2: {}}},
		"replace past end":  {BaseLen: sess.Head.ViewLen, Replace: map[int]transcript.Message{sess.Head.ViewLen: {}}},
		"stale base length": {BaseLen: 3},
	} {
		if _, err := s.Apply(sess.ID, rw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	v, _ := s.Transcript(sess.ID)
	if len(v.Messages) != sess.Head.ViewLen {
		t.Fatal("a refused rewrite changed the session")
	}
}

func TestStore_ListAndDelete(t *testing.T) {
	s, _ := openTemp(t)
	a, _ := s.CreateSession(Session{Workspace: "/a", Title: "a"}, nil)
	b, _ := s.CreateSession(Session{Workspace: "/b", Title: "b"}, synthetic.Generate(synthetic.Default(10)))
	c, _ := s.CreateSession(Session{Workspace: "/a", Title: "c"}, nil)
	all, err := s.Sessions("")
	if err != nil || len(all) != 3 {
		t.Fatalf("list all: %d sessions, %v", len(all), err)
	}
	inA, _ := s.Sessions("/a")
	if len(inA) != 2 || inA[0].ID != c.ID || inA[1].ID != a.ID {
		t.Fatalf("sessions of /a, newest first: %+v", inA)
	}
	if err := s.DeleteSession(b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transcript(b.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted session still readable: %v", err)
	}
	if err := s.DeleteSession(b.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting twice: %v", err)
	}
	n := 0
	_ = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("h/" + b.ID)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if n != 0 {
		t.Fatalf("%d history entries left after delete", n)
	}
}

func TestStore_RefusesNewerFormat(t *testing.T) {
	s, dir := openTemp(t)
	if err := s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(formatKey, []byte(fmt.Sprint(FormatVersion+1)))
	}); err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_, err := Open(DefaultOptions(dir))
	if !errors.Is(err, ErrFormatTooNew) {
		t.Fatalf("opening a newer store: %v; want ErrFormatTooNew", err)
	}
}

func TestStore_SecondOpenIsLockedWithClearError(t *testing.T) {
	_, dir := openTemp(t)
	_, err := Open(DefaultOptions(dir))
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v; want ErrLocked", err)
	}
	msg := err.Error()
	want := []string{dir, "stop that alisio-lsp"} // where to choose another store is the edge's to say (api.Explain)
	if runtime.GOOS != "windows" {                // Badger's lock file holds the PID on Unix; Windows keeps it unreadable
		want = append(want, fmt.Sprint(os.Getpid()))
	}
	for _, want := range want {
		if !strings.Contains(msg, want) {
			t.Errorf("lock error %q does not mention %q", msg, want)
		}
	}
}

func TestOpenDataDir_IsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix modes: the data directory is private through %LOCALAPPDATA%'s ACL")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := OpenDataDir(dir, DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSession(Session{}, synthetic.Generate(synthetic.Default(50))); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The directories and every file of the store, Badger's .sst, .vlog and .mem included.
	paths := []string{dir, s.Dir()}
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		paths = append(paths, filepath.Join(s.Dir(), e.Name()))
	}
	if len(paths) < 5 {
		t.Fatalf("the store holds only %v", paths)
	}
	for _, d := range paths {
		st, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v; want no group/other access", d, st.Mode().Perm())
		}
	}
}

func TestDataDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/x")
	if d, _ := DataDir(""); d != filepath.Join("/x", "alisio") {
		t.Fatalf("XDG: %s", d)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	t.Setenv("LOCALAPPDATA", `C:\Users\u\AppData\Local`)
	want := map[string]string{"linux": "/home/u/.local/share/alisio", "darwin": "/home/u/Library/Application Support/alisio",
		"windows": `C:\Users\u\AppData\Local\alisio`}[runtime.GOOS]
	if d, _ := DataDir(""); d != want {
		t.Fatalf("home: %s, want %s", d, want)
	}
	if d, _ := DataDir("/tmp/z"); d != filepath.FromSlash(mustAbs(t, "/tmp/z")) {
		t.Fatalf("override: %s", d)
	}
}

func mustAbs(t *testing.T, p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func TestStore_LargeRewriteExceedsOneTransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100k messages")
	}
	s, _ := openTemp(t)
	cfg := synthetic.Default(100_000)
	cfg.ResultChars, cfg.HugeEvery = 200, 0
	msgs := synthetic.Generate(cfg)
	sess, err := s.CreateSession(Session{}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := s.Transcript(sess.ID)
	rw := crashRewrite(v, 1)
	if _, err := s.Apply(sess.ID, rw); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Transcript(sess.ID)
	if len(after.Messages) != len(rw.Apply(v.Messages)) {
		t.Fatalf("got %d messages", len(after.Messages))
	}
	verify(t, s, sess.ID)
}

// TestStore_OpensAfterACrashLeftEmptyLogFiles covers badger issue #2207: a kill between creating a memtable
// or value log file and sizing it leaves a 0-byte file that made Open fail.
func TestStore_OpensAfterACrashLeftEmptyLogFiles(t *testing.T) {
	for _, name := range []string{"00009.mem", "000009.vlog"} {
		t.Run(name, func(t *testing.T) {
			if runtime.GOOS == "windows" && name == "000009.vlog" {
				t.Skip("Badger on Windows cannot retry the open after an empty value log: its first attempt leaves the memtable mapped, and Windows refuses to truncate a mapped file")
			}
			s, dir := openTemp(t)
			sess, _ := s.CreateSession(Session{Title: "kept"}, synthetic.Generate(synthetic.Default(10)))
			_ = s.Close()
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			s2, err := Open(DefaultOptions(dir))
			if err != nil {
				t.Fatalf("reopening with an empty %s: %v", name, err)
			}
			defer s2.Close()
			if got, err := s2.Session(sess.ID); err != nil || got.Title != "kept" {
				t.Fatalf("session after reopen: %v", err)
			}
		})
	}
}

func TestStore_ApplyInsertAfter(t *testing.T) {
	s, _ := openTemp(t)
	msgs := synthetic.Generate(synthetic.Default(10))
	sess, _ := s.CreateSession(Session{}, msgs)
	rw := transcript.Rewrite{BaseEpoch: sess.Head.Epoch, BaseLen: len(msgs),
		InsertAfter: map[int][]transcript.Message{0: {{ID: "x1", Role: transcript.RoleUser, Text: "after first"}}, len(msgs) - 1: {{ID: "x2", Role: transcript.RoleUser, Text: "at the end"}}}}
	if _, err := s.Apply(sess.ID, rw); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Transcript(sess.ID)
	want := rw.Apply(msgs)
	if len(v.Messages) != len(want) || v.Messages[1].ID != "x1" || v.Messages[len(want)-1].ID != "x2" || v.Messages[2].ID != msgs[1].ID {
		t.Fatalf("insert-after not applied: %d messages", len(v.Messages))
	}
	verify(t, s, sess.ID)
	if _, err := s.Apply(sess.ID, transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), InsertAfter: map[int][]transcript.Message{len(v.Messages): {{}}}}); err == nil {
		t.Fatal("an insert past the end was accepted")
	}
}

// TestCloseWhileInUse: readers and writers racing with Close either finish before it or get ErrClosed; none
// reaches the closed database (which crashes the process).
func TestCloseWhileInUse(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/w"}, synthetic.Generate(synthetic.Default(200)))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 64)
	for i := 0; i < 8; i++ {
		go func() {
			for {
				_, err := s.Transcript(sess.ID)
				if err == nil {
					_, err = s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "more"})
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Fatalf("an operation after Close: %v; want ErrClosed", err)
		}
	}
	if _, err := s.Sessions(""); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sessions after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// TestTitlesAreOneLine: a title with newlines, tabs or terminal escapes is stored and shown as one line.
func TestTitlesAreOneLine(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Title: "fix\nthe\tparser\x1b[31m now\r\n"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.Session(sess.ID)
	list, _ := s.Sessions("")
	if got.Title != "fix the parser[31m now" || list[0].Title != got.Title {
		t.Fatalf("title %q / %q", got.Title, list[0].Title)
	}
}

// TestMemories: memories are kept per workspace across reopenings, without duplicates (case, spacing and
// final punctuation aside), and can be deleted.
func TestMemories(t *testing.T) {
	s, dir := openTemp(t)
	added, err := s.AddMemories("/a", "s1", []string{"Use tabs.", "use  TABS", "Tests run with make test", " "})
	if err != nil || len(added) != 2 {
		t.Fatalf("%+v %v", added, err)
	}
	if more, _ := s.AddMemories("/a", "s2", []string{"tests run with make test!", "Never push to main"}); len(more) != 1 || more[0].Text != "Never push to main" {
		t.Fatalf("second batch: %+v", more)
	}
	if other, _ := s.Memories("/b"); len(other) != 0 {
		t.Fatalf("another workspace sees %+v", other)
	}
	s2 := reopen(t, s, dir)
	defer s2.Close()
	ms, err := s2.Memories("/a")
	if err != nil || len(ms) != 3 || ms[0].Text != "Use tabs." || ms[0].Session != "s1" {
		t.Fatalf("after reopening: %+v %v", ms, err)
	}
	if err := s2.DeleteMemory("/a", ms[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := s2.DeleteMemory("/a", ms[0].ID); err == nil {
		t.Fatal("deleting twice")
	}
	if left, _ := s2.Memories("/a"); len(left) != 2 {
		t.Fatalf("after delete: %+v", left)
	}
}

// TestStore_OversizedMessageIsRefusedClearly: a message too large to store fails with a short error that
// says so (Badger's own error dumps the value in hex), and the session is left as it was.
func TestStore_OversizedMessageIsRefusedClearly(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/w"}, []transcript.Message{{Role: transcript.RoleUser, Text: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: strings.Repeat("x", MaxEntryBytes+1)})
	if err == nil || !strings.Contains(err.Error(), "larger than a session can store") || len(err.Error()) > 300 {
		t.Fatalf("oversized message: %.300v", err)
	}
	v, err := s.Transcript(sess.ID)
	if err != nil || len(v.Messages) != 1 {
		t.Fatalf("the session changed: %d messages, %v", len(v.Messages), err)
	}
}

// TestOpenDataDir_RefusesAnotherUsersDirectory: a data directory owned by another user (one made 0777 in a
// shared /tmp, say) is refused with a message naming it, and neither chmodded nor used.
func TestOpenDataDir_RefusesAnotherUsersDirectory(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("giving a directory to another user needs root (and Unix owners)")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil { // Mkdir's mode went through the umask
		t.Fatal(err)
	}
	_, err := OpenDataDir(dir, DefaultOptions(""))
	if err == nil || !strings.Contains(err.Error(), dir+" belongs to another user (uid 65534)") || !strings.Contains(err.Error(), "--data-dir") {
		t.Fatalf("another user's data directory: %v", err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o777 {
		t.Fatalf("the directory was changed to %v", st.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the directory was used: %v", entries)
	}
}

// reopen closes s and opens the store in dir again, as a restart of the process does.
func reopen(t *testing.T, s *Store, dir string) *Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	return s2
}

// TestMemories_ConcurrentAddsKeepOne: two compactions of one workspace adding the same memory at once (two
// windows) store it once; the read-then-write used to let both through.
func TestMemories_ConcurrentAddsKeepOne(t *testing.T) {
	s, _ := openTemp(t)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.AddMemories("/w", fmt.Sprint("s", i), []string{"Never push to main."}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if ms, err := s.Memories("/w"); err != nil || len(ms) != 1 {
		t.Fatalf("%d memories of one text (%v)", len(ms), err)
	}
}
