package storage

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// A view of many batches (huge messages among them) whose messages are not in sequence order (replaced
// copies get later sequences) reads back in view order, each message measured.
func TestTranscript_ManyBatchesInViewOrder(t *testing.T) {
	s, _ := openTemp(t)
	cfg := synthetic.Default(3000)
	cfg.HugeEvery = 7 // results of about 48 KB: batches fill by size as well as by count
	msgs := synthetic.Generate(cfg)
	sess, err := s.CreateSession(Session{}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameMessages(t, v.Messages, msgs)
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(msgs), Replace: map[int]transcript.Message{}}
	for pos := 5; pos < len(msgs); pos += 97 {
		m := msgs[pos]
		m.ID, m.Text = "", "replaced "+m.Text[:min(len(m.Text), 10)]
		m.Measure()
		rw.Replace[pos] = m
	}
	if _, err := s.Apply(sess.ID, rw); err != nil {
		t.Fatal(err)
	}
	v, err = s.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := rw.Apply(msgs)
	if len(v.Messages) != len(want) {
		t.Fatalf("%d messages; want %d", len(v.Messages), len(want))
	}
	for i := range want {
		got := v.Messages[i]
		if got.Text != want[i].Text || got.Role != want[i].Role || got.Chars() != want[i].Chars() {
			t.Fatalf("message %d: %q (%d chars); want %q (%d chars)", i, got.Text, got.Chars(), want[i].Text, want[i].Chars())
		}
		if _, replaced := rw.Replace[i]; !replaced && got.ID != want[i].ID {
			t.Fatalf("message %d is %s; want %s", i, got.ID, want[i].ID)
		}
	}
}

// Messages stored in another JSON form than this version writes (other key spellings and order, white space)
// read as encoding/json reads them; an unreadable one is reported with its sequence.
func TestTranscript_ReadsOtherStoredForms(t *testing.T) {
	s, _ := openTemp(t)
	msgs := synthetic.Generate(synthetic.Default(600))[:600]
	sess, err := s.CreateSession(Session{}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	other := `{ "Text" : "written by hand", "ROLE":"user",` + "\n" + `"id":"hand-1", "createdAt":"2026-01-02T03:04:05Z", "future":{"x":[1]} }`
	put := func(seq uint64, raw string) {
		t.Helper()
		if err := s.db.Update(func(txn *badger.Txn) error { return txn.Set(historyKey(sess.ID, seq), []byte(raw)) }); err != nil {
			t.Fatal(err)
		}
	}
	put(300, other)
	v, err := s.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var want transcript.Message
	if err := json.Unmarshal([]byte(other), &want); err != nil {
		t.Fatal(err)
	}
	want.Measure()
	if got := v.Messages[300]; got.ID != "hand-1" || got.Text != want.Text || got.Role != transcript.RoleUser || !got.CreatedAt.Equal(want.CreatedAt) || got.Chars() != want.Chars() {
		t.Fatalf("got %+v; want %+v", got, want)
	}
	sameMessages(t, v.Messages[301:], msgs[301:])
	put(450, `{"id":"broken","text":`)
	put(420, `{"id":"broken too"`)
	if _, err := s.Transcript(sess.ID); err == nil || !strings.Contains(err.Error(), "decoding message 420 of session") {
		t.Fatalf("got %v; want the error of message 420", err)
	}
}
