package storage

import (
	"errors"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// keysUnder counts the stored keys under prefix.
func keysUnder(t *testing.T, s *Store, prefix string) int {
	t.Helper()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte(prefix)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCreateSessionFrom: a session staged batch by batch, over many transactions, appears whole with the
// metadata fill set; when fill fails halfway there is no session and nothing of it is left in the store.
func TestCreateSessionFrom(t *testing.T) {
	s, _ := openTemp(t)
	msgs := synthetic.Generate(synthetic.Default(3000)) // ≈ 5 MB: several transactions
	fill := func(failAt int) func(*Session, func(...transcript.Message) error) error {
		return func(meta *Session, add func(...transcript.Message) error) error {
			for i := 0; i < len(msgs); i += 100 {
				if i >= failAt {
					return errors.New("a bad record")
				}
				if err := add(msgs[i:min(i+100, len(msgs))]...); err != nil {
					return err
				}
			}
			meta.Title, meta.Instructions = "learned", []string{"sys"}
			return nil
		}
	}
	if _, err := s.CreateSessionFrom(Session{ID: "half"}, fill(2000)); err == nil || !strings.Contains(err.Error(), "a bad record") {
		t.Fatalf("a failed fill: %v", err)
	}
	if ss, _ := s.Sessions(""); len(ss) != 0 {
		t.Fatalf("a failed create left %d sessions", len(ss))
	}
	if n := keysUnder(t, s, "h/half/") + keysUnder(t, s, "v/half/"); n != 0 {
		t.Fatalf("a failed create left %d staged entries", n)
	}
	sess, err := s.CreateSessionFrom(Session{ID: "whole", Workspace: "/w"}, fill(len(msgs)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Messages) != len(msgs) || v.Session.Title != "learned" || len(v.Session.Instructions) != 1 || v.Session.Workspace != "/w" {
		t.Fatalf("%d messages (want %d), record %+v", len(v.Messages), len(msgs), v.Session)
	}
	for i := range msgs {
		if v.Messages[i].Text != msgs[i].Text || v.Messages[i].ToolCallID != msgs[i].ToolCallID {
			t.Fatalf("message %d differs", i)
		}
	}
	if err := transcripttest.CheckStructure(v.Messages); err != nil {
		t.Fatal(err)
	}
}
