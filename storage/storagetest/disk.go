// Package storagetest gives tests a real small file system to fill, to see how the store and the daemon
// behave when the disk is full, and a check of the totals the store keeps.
package storagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/storage"
)

// SmallDisk mounts a tmpfs of size (as mount takes it: "160m") for the test and returns its path; the test is
// skipped where mounting is not allowed (not root).
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// Fill writes a file in dir that leaves about leave bytes free on its file system.
func Fill(t testing.TB, dir string, leave uint64) {
	t.Helper()
	free, err := storage.FreeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 1<<20)
	for left := free - min(free, leave); left > 0; {
		n := min(left, uint64(len(block)))
		if _, err := f.Write(block[:n]); err != nil {
			t.Fatal(err)
		}
		left -= n
	}
}

// Unfill removes what Fill wrote.
func Unfill(t testing.TB, dir string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
}

// CheckTotals fails the test when the totals the store keeps for session id differ from a recount of its
// stored transcript and history (storage.Store.VerifyTotals).
func CheckTotals(t testing.TB, s *storage.Store, id string) {
	t.Helper()
	if err := s.VerifyTotals(id); err != nil {
		t.Fatal(err)
	}
}
