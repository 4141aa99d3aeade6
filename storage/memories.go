package storage

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Memory is a durable fact of a workspace (a user preference, a project convention) that the memory plugin
// saved from a compaction, so that later sessions of the workspace start with it (SPEC PH3).
type Memory struct {
	ID        string    `json:"id"`
	Workspace string    `json:"workspace"`
	Text      string    `json:"text"`
	Session   string    `json:"session,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

func memoryPrefix(workspace string) []byte {
	sum := sha256.Sum256([]byte(workspace))
	return []byte("m/" + hex.EncodeToString(sum[:12]) + "/")
}

// Memories lists the memories of workspace, oldest first.
func (s *Store) Memories(workspace string) ([]Memory, error) {
	release, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer release()
	var out []Memory
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: memoryPrefix(workspace), PrefetchValues: true})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var m Memory
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &m) }); err != nil {
				return fmt.Errorf("decoding memory %s: %w", it.Item().Key(), err)
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing memories: %w", err)
	}
	return out, nil
}

// AddMemories stores the texts that are not already memories of workspace (compared without case, spacing or
// final punctuation, and once each) and returns those it added.
func (s *Store) AddMemories(workspace, session string, texts []string) ([]Memory, error) {
	// Read, then write: two compactions of one workspace at once (two windows) must not both add a memory.
	l := s.sessionLock("memories\x00" + workspace) // no session ID holds a NUL
	l.Lock()
	defer l.Unlock()
	existing, err := s.Memories(workspace)
	if err != nil {
		return nil, err
	}
	release, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer release()
	seen := map[string]bool{}
	for _, m := range existing {
		seen[memoryKey(m.Text)] = true
	}
	var added []Memory
	now := time.Now().UTC()
	for _, t := range texts {
		t = strings.TrimSpace(t)
		k := memoryKey(t)
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		added = append(added, Memory{ID: transcript.NewID(), Workspace: workspace, Text: t, Session: session, CreatedAt: now})
	}
	if len(added) == 0 {
		return nil, nil
	}
	need := 0
	for _, m := range added {
		need += 256 + len(m.Text)
	}
	if err := s.haveSpace(need); err != nil {
		return nil, err
	}
	err = s.db.Update(func(txn *badger.Txn) error {
		for _, m := range added {
			raw, _ := json.Marshal(m)
			if err := txn.Set(append(memoryPrefix(workspace), m.ID...), raw); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("saving memories: %w", err)
	}
	return added, nil
}

// DeleteMemory removes memory id of workspace.
func (s *Store) DeleteMemory(workspace, id string) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	key := append(memoryPrefix(workspace), id...)
	return s.db.Update(func(txn *badger.Txn) error {
		if _, err := txn.Get(key); errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("%w %q in workspace %s", ErrNoMemory, id, workspace)
		} else if err != nil {
			return err
		}
		return txn.Delete(key)
	})
}

// memoryKey is the form two memories are compared in: lower case, single spaces, no final punctuation.
func memoryKey(t string) string {
	t = strings.ToLower(strings.Join(strings.Fields(t), " "))
	return strings.TrimRightFunc(t, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) })
}
