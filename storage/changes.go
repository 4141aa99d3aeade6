package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// FileChange is a file a tool call of a session wrote, kept so that the change can be undone: the file's
// content before the call (its pre-image) and a digest of what the call left.
type FileChange struct {
	// Seq orders a session's changes (the store sets it).
	Seq    uint64 `json:"seq"`
	CallID string `json:"callId"`
	// Path is relative to the workspace.
	Path    string `json:"path"`
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"`
	// AfterSum is the SHA-256 of what the call wrote (hex): a file that no longer matches it was changed since.
	AfterSum string    `json:"afterSum"`
	At       time.Time `json:"at"`
	// Undone marks a change an undo restored.
	Undone bool `json:"undone,omitempty"`
}

func changesPrefix(session string) []byte { return []byte("f/" + session + "/") }

func changeKey(session string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(changesPrefix(session), seq)
}

// SaveFileChange keeps c for session, after the changes saved before it.
func (s *Store) SaveFileChange(session string, c FileChange) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	if err := s.haveSpace(512 + len(c.Before)); err != nil {
		return err
	}
	if c.Seq == 0 {
		c.Seq = uint64(time.Now().UnixNano())
	}
	if c.At.IsZero() {
		c.At = time.Now().UTC()
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(changeKey(session, c.Seq), raw) }); err != nil {
		return fmt.Errorf("saving the pre-image of %s: %w", c.Path, err)
	}
	return nil
}

// FileChanges lists the changes kept for session, oldest first.
func (s *Store) FileChanges(session string) ([]FileChange, error) {
	release, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer release()
	var out []FileChange
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: changesPrefix(session), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var c FileChange
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
				return fmt.Errorf("decoding file change %x: %w", it.Item().Key(), err)
			}
			out = append(out, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing the file changes of %s: %w", session, err)
	}
	return out, nil
}

// MarkUndone records that the changes seqs of session were undone.
func (s *Store) MarkUndone(session string, seqs []uint64) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	return s.db.Update(func(txn *badger.Txn) error {
		for _, seq := range seqs {
			item, err := txn.Get(changeKey(session, seq))
			if err != nil {
				return fmt.Errorf("file change %d of %s: %w", seq, session, err)
			}
			var c FileChange
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &c) }); err != nil {
				return err
			}
			c.Undone = true
			raw, _ := json.Marshal(c)
			if err := txn.Set(changeKey(session, seq), raw); err != nil {
				return err
			}
		}
		return nil
	})
}
