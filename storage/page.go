package storage

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Page is a window onto a session's messages: of its effective transcript, or of its whole history with the
// compacted messages marked.
type Page struct {
	Session Session
	// Offset is the position of Messages[0] in the listing paged; Total is the listing's length.
	Offset, Total int
	Messages      []transcript.Message
}

// ReadPage reads up to limit messages of session id from position offset: of the effective transcript, or
// with includeCompacted of the history in storage order (Compacted set on those no longer in the transcript).
// A negative offset reads the last limit messages; limit 0 reads to the end. Its cost depends on the page's
// length, plus, for a history page, one pass over the transcript's small position entries.
func (s *Store) ReadPage(id string, includeCompacted bool, offset, limit int) (Page, error) {
	release, err := s.enter()
	if err != nil {
		return Page{}, err
	}
	defer release()
	if err := validID(id); err != nil {
		return Page{}, err
	}
	if limit < 0 {
		return Page{}, fmt.Errorf("a page cannot hold %d messages", limit)
	}
	if _, err := s.countedSession(id); err != nil {
		return Page{}, err
	}
	p := Page{Messages: []transcript.Message{}}
	err = s.db.View(func(txn *badger.Txn) error {
		sess, _, err := getSession(txn, id)
		if err != nil {
			return err
		}
		p.Session, p.Total = sess, sess.Head.ViewLen
		if includeCompacted {
			p.Total = int(sess.Head.NextSeq)
		}
		p.Offset, limit = PageBounds(p.Total, offset, limit)
		if limit == 0 {
			return nil
		}
		var seqs []uint64
		var live map[uint64]bool
		if includeCompacted {
			seqs = make([]uint64, limit)
			for i := range seqs {
				seqs[i] = uint64(p.Offset + i)
			}
			if live, err = liveWithin(txn, id, sess.Head, seqs[0], seqs[limit-1]); err != nil {
				return err
			}
		} else if seqs, err = viewRange(txn, id, sess.Head, p.Offset, limit); err != nil {
			return err
		}
		if p.Messages, err = readMessages(txn, id, seqs); err != nil {
			return err
		}
		if includeCompacted {
			undone, err := undoneSeqs(txn, id, sess.Head)
			if err != nil {
				return err
			}
			for i := range p.Messages {
				p.Messages[i].Compacted = !live[seqs[i]]
				p.Messages[i].Undone = undone[seqs[i]] && !live[seqs[i]]
			}
		}
		return nil
	})
	return p, err
}

// PageBounds clamps a page request (see ReadPage) to a listing of total messages: the first position and the
// count to read.
func PageBounds(total, offset, limit int) (from, n int) {
	if limit == 0 || limit > total {
		limit = total
	}
	if offset < 0 {
		offset = total - limit
	}
	offset = min(offset, total)
	return offset, min(limit, total-offset)
}

// liveWithin returns which history sequences in [lo, hi] are part of the session's current view.
func liveWithin(txn *badger.Txn, id string, head Head, lo, hi uint64) (map[uint64]bool, error) {
	seqs, err := viewSeqs(txn, id, head)
	if err != nil {
		return nil, err
	}
	live := map[uint64]bool{}
	for _, seq := range seqs {
		if seq >= lo && seq <= hi {
			live[seq] = true
		}
	}
	return live, nil
}
