package storage_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/storage/storagetest"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestDiskFull: on a real file system that fills up, writes are refused with storage.ErrDiskFull and one clear
// sentence before Badger could crash the process (SIGBUS), reads go on, and nothing stored is lost; a store
// on a disk already that full is not opened, with the same clear error.
func TestDiskFull(t *testing.T) {
	disk := storagetest.SmallDisk(t, "160m")
	dir := filepath.Join(disk, "store")
	s, err := storage.Open(storage.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(storage.Session{Workspace: "/w"}, synthetic.Generate(synthetic.Default(100)))
	if err != nil {
		t.Fatal(err)
	}
	storagetest.Fill(t, disk, 40<<20)
	before, _ := s.Transcript(sess.ID)
	_, err = s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "one more"})
	if !errors.Is(err, storage.ErrDiskFull) || !strings.Contains(err.Error(), "free some disk space") || strings.Count(err.Error(), "\n") > 0 {
		t.Fatalf("append on a full disk: %v", err)
	}
	if _, err := s.CreateSession(storage.Session{}, nil); !errors.Is(err, storage.ErrDiskFull) {
		t.Fatalf("create on a full disk: %v", err)
	}
	after, err := s.Transcript(sess.ID)
	if err != nil || len(after.Messages) != len(before.Messages) {
		t.Fatalf("reading on a full disk: %v (%d messages; want %d)", err, len(after.Messages), len(before.Messages))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Open(storage.DefaultOptions(dir)); !errors.Is(err, storage.ErrDiskFull) {
		t.Fatalf("open on a full disk: %v", err)
	}
	// Once space is freed, everything is there.
	storagetest.Unfill(t, disk)
	s, err = storage.Open(storage.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, err := s.Transcript(sess.ID)
	if err != nil || len(again.Messages) != len(before.Messages) {
		t.Fatalf("after freeing space: %v", err)
	}
}

// TestClose_OnADiskFilledByAnotherProgram: a store whose disk another program fills after its last write
// closes without crashing (Badger used to die of SIGBUS writing its last table into a mapping the disk could
// not back), says why it was left for its journal, and keeps every message it acknowledged.
func TestClose_OnADiskFilledByAnotherProgram(t *testing.T) {
	disk := storagetest.SmallDisk(t, "160m")
	dir := filepath.Join(disk, "store")
	s, err := storage.Open(storage.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := s.CreateSession(storage.Session{Workspace: "/w"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "ALISIO_CLOSE_CHILD="+dir, "ALISIO_CLOSE_SESSION="+sess.ID)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(stdout)
	if line, err := lines.ReadString('\n'); line != "appended\n" {
		_ = child.Wait()
		t.Fatalf("the child: %q %v\n%s", line, err, stderr.String())
	}
	storagetest.Fill(t, disk, 0)
	_, _ = io.WriteString(stdin, "close\n")
	said, _ := io.ReadAll(lines)
	if err := child.Wait(); err != nil {
		t.Fatalf("closing on a full disk: %v\n%s%s", err, said, stderr.String())
	}
	out := string(said)
	if !strings.Contains(out, "free some disk space") || !strings.Contains(out, "nothing is lost") {
		t.Errorf("Close said %q, want why the store was left and what to do", out)
	}

	storagetest.Unfill(t, disk)
	s, err = storage.Open(storage.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := s.Transcript(sess.ID)
	if err != nil || len(v.Messages) != 50 || !strings.HasPrefix(v.Messages[49].Text, "kept 49 ") {
		t.Fatalf("after the disk was freed: %d messages, %v", len(v.Messages), err)
	}
}
