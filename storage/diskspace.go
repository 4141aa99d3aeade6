package storage

import (
	"errors"
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/internal/osproc"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ErrDiskFull: the disk holding the store has too little free space to write safely.
var ErrDiskFull = errors.New("not enough free disk space for the session store")

// DefaultMinFreeBytes is the free space a store keeps in reserve: Badger writes through memory-mapped files,
// and a write into a mapping the disk cannot back kills the process (SIGBUS) instead of failing. Two memtables
// of headroom plus margin keep every write and flush inside space that exists.
const DefaultMinFreeBytes = 64 << 20

// FreeBytes is the space an unprivileged process may still use on the file system holding dir.
func FreeBytes(dir string) (uint64, error) { return osproc.FreeBytes(dir) }

// checkSpace refuses, with ErrDiskFull and what to do, when writing about need bytes would leave less than
// the reserve free. It asks the file system every time (a statfs costs 2–5 µs, an fstatfs about 1 µs): a disk
// filled by another program a moment ago must still be seen. Nothing has been written when it refuses.
func checkSpace(dir string, reserve uint64, need int) error {
	if reserve == 0 {
		return nil
	}
	free, err := FreeBytes(dir)
	if err != nil {
		return err
	}
	return refuseBelow(dir, free, reserve, need)
}

// haveSpace is checkSpace for a write of the store, asked through its open directory handle (fstatfs), which
// costs less than a statfs of its path: it is on the path of every append.
func (s *Store) haveSpace(need int) error {
	if s.reserve == 0 {
		return nil
	}
	free, err := osproc.FreeBytesOf(s.dirFile)
	if err != nil {
		return err
	}
	return refuseBelow(s.dir, free, s.reserve, need)
}

// roomToClose refuses, with ErrDiskFull, to close a store whose disk cannot hold the table Badger writes of
// its last memtable on close (one memtable, with its index: twice its size is ample). A store opened without
// a reserve is always closed.
func (s *Store) roomToClose() error {
	if s.reserve == 0 {
		return nil
	}
	free, err := osproc.FreeBytesOf(s.dirFile)
	if err != nil || free >= 2*memTableSize {
		return nil // when the space cannot be read, closing is still the better bet
	}
	return fmt.Errorf("%w: %s has %s free, too little to write its last table, so it was left for its journal to be read at the next start (nothing is lost); free some disk space",
		ErrDiskFull, s.dir, mib(free))
}

// refuseBelow is checkSpace's verdict once the free space of dir is known.
func refuseBelow(dir string, free, reserve uint64, need int) error {
	if want := reserve + uint64(need); free < want {
		return fmt.Errorf("%w: %s has %s free and alisio needs %s; free some disk space and try again (nothing was written)",
			ErrDiskFull, dir, mib(free), mib(want))
	}
	return nil
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// approxBytes bounds the stored size of msgs (UTF-8 text plus framing), cheaply.
func approxBytes(msgs []transcript.Message) int {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		n += 512 + len(m.Text) + len(m.Reasoning) + len(m.Structured)
		for _, c := range m.ToolCalls {
			n += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
		for _, it := range m.Items {
			n += len(it.Data)
		}
	}
	return n
}
