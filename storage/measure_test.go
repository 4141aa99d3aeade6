package storage

import (
	"errors"
	"testing"
)

// TestStore_Measure: a session's provider measure is kept across a reopen of the store and replaced by the
// next; none is kept for a session that does not exist, and none outlives its session.
func TestStore_Measure(t *testing.T) {
	s, dir := openTemp(t)
	sess, err := s.CreateSession(Session{Workspace: "/ws"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Measure(sess.ID); ok || err != nil {
		t.Fatalf("a new session has a measure (%v)", err)
	}
	for _, m := range []ProviderMeasure{{Provider: "openai a m", CharsPerToken: 2.5}, {Provider: "openai a m", CharsPerToken: 2.1, Window: 16_384}} {
		if err := s.SaveMeasure(sess.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s, dir)
	defer s.Close()
	got, ok, err := s.Measure(sess.ID)
	if !ok || err != nil || got.CharsPerToken != 2.1 || got.Window != 16_384 || got.Provider != "openai a m" || got.At.IsZero() {
		t.Fatalf("after a reopen: %+v %v %v", got, ok, err)
	}
	if err := s.SaveMeasure("no-such-session", got); !errors.Is(err, ErrNotFound) {
		t.Errorf("a measure of no session: %v", err)
	}
	if err := s.DeleteSession(sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Measure(sess.ID); ok || err != nil {
		t.Errorf("the measure outlived its session (%v)", err)
	}
}
