package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ErrNothingToUndo: the session's transcript was not rewritten (or its rewrites are all undone, or were made
// before alisio-lsp kept what undoing needs).
var ErrNothingToUndo = errors.New("there is nothing to undo: no compaction, trim or checkpoint edit of this session is left to undo")

// Rewrite kinds, as an undo reports them.
const (
	KindCompaction     = "compaction"
	KindReduction      = "reduction"
	KindCheckpointEdit = "checkpoint edit"
)

// epochRecord says how an epoch's view came to be, so that the rewrite that made it can be undone: a rewrite
// of the view of epoch Parent, which had ParentLen messages then (that view is kept). The epoch's view had
// Created messages when it was made; those from Created on were appended since. An undo's epoch is its
// parent's again, plus what was appended: it carries the parent's record, so that undoing again reaches the
// rewrite before.
type epochRecord struct {
	Undoable  bool   `json:"undoable"`
	Kind      string `json:"kind,omitempty"`
	Parent    uint64 `json:"parent,omitempty"`
	ParentLen int    `json:"parentLen,omitempty"`
	Created   int    `json:"created"`
	// Inserted are the sequences the rewrite stored (the checkpoint, reduced copies); Undone, on an undo's
	// record, those of the rewrite it undid, which the history marks as undone.
	Inserted []uint64 `json:"inserted,omitempty"`
	Undone   []uint64 `json:"undone,omitempty"`
}

// undoDepth is how many rewrites of a session can be undone, one after the other: the views older rewrites
// replaced are dropped.
const undoDepth = 10

// dropOldViews drops the view a session's rewrites no longer need after a rewrite made from epoch parent: the
// one undoDepth rewrites back along the chain of records (best effort: one left by a crash is invisible
// garbage).
func (s *Store) dropOldViews(id string, parent uint64) {
	epoch, drop := parent, false
	_ = s.db.View(func(txn *badger.Txn) error {
		for range undoDepth {
			rec, ok, err := readEpochRecord(txn, id, epoch)
			if err != nil || !ok || !rec.Undoable {
				return err
			}
			epoch = rec.Parent
		}
		drop = true
		return nil
	})
	if drop {
		s.dropPrefix(viewPrefix(id, epoch))
	}
}

func epochPrefix(id string) []byte { return []byte("u/" + id + "/") }

func epochKey(id string, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64(epochPrefix(id), epoch)
}

// rewriteKind names what a rewrite does: a compaction inserts a checkpoint, a checkpoint edit replaces one,
// anything else reduces kept messages.
func rewriteKind(rw transcript.Rewrite) string {
	for _, m := range rw.Insert {
		if m.Summary {
			return KindCompaction
		}
	}
	for _, m := range rw.Replace {
		if m.Summary {
			return KindCheckpointEdit
		}
	}
	return KindReduction
}

// readEpochRecord reads epoch's record; ok is false for an epoch with none (the first, or one made before
// records were kept).
func readEpochRecord(txn *badger.Txn, id string, epoch uint64) (rec epochRecord, ok bool, err error) {
	item, err := txn.Get(epochKey(id, epoch))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return rec, false, nil
	}
	if err == nil {
		err = item.Value(func(v []byte) error { return json.Unmarshal(v, &rec) })
	}
	if err != nil {
		return rec, false, fmt.Errorf("session %s: reading the record of epoch %d: %w", id, epoch, err)
	}
	return rec, true, nil
}

// UndoResult is what undoing a session's last rewrite did.
type UndoResult struct {
	Session Session
	// Kind is what was undone (KindCompaction, KindReduction, KindCheckpointEdit).
	Kind string
	// Restored is how many messages the transcript holds again that the rewrite had replaced; Kept how many
	// appended since the rewrite stay after them; More says an earlier rewrite can be undone too.
	Restored, Kept int
	More           bool
}

// LastRewrite says what Undo would undo now: the kind of the session's last rewrite, or ErrNothingToUndo.
func (s *Store) LastRewrite(id string) (string, error) {
	sess, err := s.Session(id)
	if err != nil {
		return "", err
	}
	var rec epochRecord
	var ok bool
	err = s.db.View(func(txn *badger.Txn) error {
		rec, ok, err = readEpochRecord(txn, id, sess.Head.Epoch)
		return err
	})
	if err != nil {
		return "", err
	}
	if !ok || !rec.Undoable {
		return "", ErrNothingToUndo
	}
	return rec.Kind, nil
}

// Undo restores session id's transcript exactly as it was before its last rewrite — a compaction, a
// reduction or a checkpoint edit — keeping after it the messages appended since, in one atomic step: after a
// crash the session is entirely before or after it. The rewrite's own messages stay in the history, marked
// undone. Undoing again undoes the rewrite before. It returns ErrNothingToUndo when there is none.
func (s *Store) Undo(id string) (UndoResult, error) {
	release, err := s.enter()
	if err != nil {
		return UndoResult{}, err
	}
	defer release()
	if err := validID(id); err != nil {
		return UndoResult{}, err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	sess, err := s.session(id)
	if err != nil {
		return UndoResult{}, err
	}
	var rec, parentRec epochRecord
	var entries []viewEntry
	var hasParentRec bool
	err = s.db.View(func(txn *badger.Txn) error {
		var ok bool
		if rec, ok, err = readEpochRecord(txn, id, sess.Head.Epoch); err != nil {
			return err
		}
		if !ok || !rec.Undoable {
			return ErrNothingToUndo
		}
		if !viewKept(txn, id, rec) {
			return fmt.Errorf("%w: alisio keeps what undoing needs for the last %d steps only (compactions, trims, checkpoint edits), and the next is older", ErrNothingToUndo, undoDepth)
		}
		if parentRec, hasParentRec, err = readEpochRecord(txn, id, rec.Parent); err != nil {
			return err
		}
		collect := func(head Head, from, n int) error {
			return eachViewEntry(txn, id, head, from, n, func(pos int, v []byte) error {
				e, err := decodeEntry(v)
				if err != nil {
					return fmt.Errorf("session %s: view epoch %d position %d: %w", id, head.Epoch, pos, err)
				}
				entries = append(entries, e)
				return nil
			})
		}
		if err := collect(Head{Epoch: rec.Parent}, 0, rec.ParentLen); err != nil {
			return fmt.Errorf("the view before the %s is not complete: %w", rec.Kind, err)
		}
		return collect(sess.Head, rec.Created, sess.Head.ViewLen-rec.Created)
	})
	if err != nil {
		return UndoResult{}, err
	}
	next := sess.Head.Epoch + 1
	s.dropPrefix(viewPrefix(id, next)) // a half-staged view of a write cut by a crash
	now := time.Now().UTC()
	w := s.newChunkedWriter(sess.Head.Totals.history())
	defer w.discard()
	head := sess.Head
	head.Epoch, head.ViewLen = next, 0
	for i := range entries {
		if err := w.place(viewKey(id, next, head.ViewLen), &entries[i]); err != nil {
			return UndoResult{}, err
		}
		head.ViewLen++
	}
	// The new epoch is the parent's view again: it takes the parent's record (what undoing again undoes).
	undo := epochRecord{Created: parentRec.Created, Undone: rec.Inserted}
	if hasParentRec {
		undo.Undoable, undo.Kind, undo.Parent, undo.ParentLen, undo.Inserted = parentRec.Undoable, parentRec.Kind, parentRec.Parent, parentRec.ParentLen, parentRec.Inserted
	}
	raw, err := json.Marshal(undo)
	if err != nil {
		return UndoResult{}, err
	}
	if err := w.set(epochKey(id, next), raw); err != nil {
		return UndoResult{}, err
	}
	sess.Head, sess.UpdatedAt = head, now
	if sess, err = w.commit(sess, false); err != nil {
		return UndoResult{}, err
	}
	// The undone view and the one it restored (copied into the new one) are needed no more.
	s.dropPrefix(viewPrefix(id, next-1))
	s.dropPrefix(viewPrefix(id, rec.Parent))
	more := false
	if undo.Undoable {
		_ = s.db.View(func(txn *badger.Txn) error { more = viewKept(txn, id, undo); return nil })
	}
	return UndoResult{Session: sess, Kind: rec.Kind, Restored: rec.ParentLen, Kept: len(entries) - rec.ParentLen, More: more}, nil
}

// viewKept says whether the store still holds the view rec's rewrite replaced, which undoing it restores.
func viewKept(txn *badger.Txn, id string, rec epochRecord) bool {
	if rec.ParentLen == 0 {
		return true
	}
	_, err := txn.Get(viewKey(id, rec.Parent, 0))
	return err == nil
}

// undoneSeqs are the history's messages whose rewrite was undone, from the records of the epochs up to the
// session's current one.
func undoneSeqs(txn *badger.Txn, id string, head Head) (map[uint64]bool, error) {
	out := map[uint64]bool{}
	prefix := epochPrefix(id)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		if binary.BigEndian.Uint64(it.Item().Key()[len(prefix):]) > head.Epoch {
			break // a record staged by a write a crash cut
		}
		var rec epochRecord
		if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rec) }); err != nil {
			return nil, fmt.Errorf("session %s: reading an epoch record: %w", id, err)
		}
		for _, seq := range rec.Undone {
			out[seq] = true
		}
	}
	return out, nil
}
