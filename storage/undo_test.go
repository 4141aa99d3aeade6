package storage

import (
	"errors"
	"fmt"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"
)

// compactAt applies a compaction of the first drop messages and a reduction of position reduce (if > 0).
func compactAt(t *testing.T, s *Store, id string, drop, reduce int) View {
	t.Helper()
	v, err := s.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: drop,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: fmt.Sprint("checkpoint of ", drop)}}}
	if reduce > 0 {
		m := v.Messages[reduce]
		m.ID, m.OriginalID, m.Truncated, m.Text = "", m.ID, true, "cut"
		rw.Replace = map[int]transcript.Message{reduce: m}
	}
	if _, err := s.Apply(id, rw); err != nil {
		t.Fatal(err)
	}
	after, err := s.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	return after
}

// TestStore_UndoRestoresTheTranscript: undoing a compaction (with a reduction) restores the transcript exactly,
// keeping after it the messages appended since; undoing again reaches the compaction before, and then there is
// nothing left; the undone checkpoints stay in the history, marked undone; the totals stay right throughout.
func TestStore_UndoRestoresTheTranscript(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/w"}, synthetic.Generate(synthetic.Default(100)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Undo(sess.ID); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("undo of a session never compacted: %v", err)
	}
	original, _ := s.Transcript(sess.ID)
	compactAt(t, s, sess.ID, 40, 50)
	added, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "after the first"})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := s.Transcript(sess.ID)
	compactAt(t, s, sess.ID, 20, 0)
	more, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "after the second"})
	if err != nil {
		t.Fatal(err)
	}
	if kind, err := s.LastRewrite(sess.ID); err != nil || kind != KindCompaction {
		t.Fatalf("last rewrite %q (%v)", kind, err)
	}

	res, err := s.Undo(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	now, _ := s.Transcript(sess.ID)
	sameMessages(t, now.Messages, append(append([]transcript.Message{}, first.Messages...), more...))
	if res.Kind != KindCompaction || res.Kept != 1 || !res.More {
		t.Fatalf("undo result %+v", res)
	}
	res, err = s.Undo(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	now, _ = s.Transcript(sess.ID)
	sameMessages(t, now.Messages, append(append(append([]transcript.Message{}, original.Messages...), added...), more...))
	if res.More || res.Kept != 2 {
		t.Fatalf("second undo %+v", res)
	}
	if _, err := s.Undo(sess.ID); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("a third undo: %v", err)
	}
	h, err := s.History(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	undone := 0
	for _, m := range h {
		if m.Undone {
			undone++
			if !m.Compacted || !(m.Summary || m.Truncated) {
				t.Fatalf("message %s marked undone: %+v", m.ID, m)
			}
		}
	}
	if undone != 3 { // two checkpoints and the reduced copy
		t.Fatalf("%d messages marked undone; want 3", undone)
	}
	// A compaction after the undos is undone as well.
	compactAt(t, s, sess.ID, 30, 0)
	if _, err := s.Undo(sess.ID); err != nil {
		t.Fatal(err)
	}
	now, _ = s.Transcript(sess.ID)
	sameMessages(t, now.Messages, append(append(append([]transcript.Message{}, original.Messages...), added...), more...))
	verify(t, s, sess.ID)
}

// TestStore_UndoDepth: the last undoDepth rewrites can be undone one after the other; older ones cannot, and
// the store says so.
func TestStore_UndoDepth(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/w"}, synthetic.Generate(synthetic.Default(200)))
	if err != nil {
		t.Fatal(err)
	}
	for range undoDepth + 2 {
		compactAt(t, s, sess.ID, 5, 0)
	}
	for i := range undoDepth {
		if _, err := s.Undo(sess.ID); err != nil {
			t.Fatalf("undo %d: %v", i+1, err)
		}
	}
	if _, err := s.Undo(sess.ID); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("undo past the depth: %v", err)
	}
	verify(t, s, sess.ID)
}

// editCheckpoint replaces the checkpoint at position 0 with one saying text.
func editCheckpoint(t *testing.T, s *Store, id, text string) {
	t.Helper()
	v, err := s.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages),
		Replace: map[int]transcript.Message{0: {Role: transcript.RoleUser, Summary: true, Text: text}}}
	if _, err := s.Apply(id, rw); err != nil {
		t.Fatal(err)
	}
}

// TestStore_EditsInARowAreOneUndo: checkpoint edits one after the other (an editor saving as the user types)
// are undone in one step, back to the checkpoint the compaction wrote; an edit after new messages is a step
// of its own.
func TestStore_EditsInARowAreOneUndo(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/w"}, synthetic.Generate(synthetic.Default(100)))
	if err != nil {
		t.Fatal(err)
	}
	compacted := compactAt(t, s, sess.ID, 40, 0)
	for i := range 12 {
		editCheckpoint(t, s, sess.ID, fmt.Sprint("edit ", i))
	}
	res, err := s.Undo(sess.ID)
	if err != nil || res.Kind != KindCheckpointEdit || !res.More {
		t.Fatalf("undo of the edits: %+v %v", res, err)
	}
	now, _ := s.Transcript(sess.ID)
	sameMessages(t, now.Messages, compacted.Messages)
	if _, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "more"}); err != nil {
		t.Fatal(err)
	}
	editCheckpoint(t, s, sess.ID, "edit A")
	if _, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleUser, Text: "and more"}); err != nil {
		t.Fatal(err)
	}
	editCheckpoint(t, s, sess.ID, "edit B")
	for _, want := range []string{"edit A", "checkpoint of 40"} {
		if _, err := s.Undo(sess.ID); err != nil {
			t.Fatal(err)
		}
		v, _ := s.Transcript(sess.ID)
		if v.Messages[0].Text != want {
			t.Fatalf("after an undo the checkpoint says %q; want %q", v.Messages[0].Text, want)
		}
	}
	res, err = s.Undo(sess.ID)
	if err != nil || res.Kind != KindCompaction || res.More {
		t.Fatalf("undo of the compaction: %+v %v", res, err)
	}
	verify(t, s, sess.ID)
}
