package storage

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// verify fails the test when the stored totals of session id differ from a recount (VerifyTotals). The
// tests of other packages use storagetest.CheckTotals.
func verify(t testing.TB, s *Store, id string) {
	t.Helper()
	if err := s.VerifyTotals(id); err != nil {
		t.Fatal(err)
	}
}

// withUsage gives every assistant reply of msgs a reported usage, as the agent stores it.
func withUsage(msgs []transcript.Message) []transcript.Message {
	for i := range msgs {
		if msgs[i].Role == transcript.RoleAssistant {
			msgs[i].Usage = &transcript.Usage{PromptTokens: 1000 + i, CompletionTokens: 10 + i%7}
		}
	}
	return msgs
}

func TestStore_TotalsFollowEveryWrite(t *testing.T) {
	s, dir := openTemp(t)
	cfg := synthetic.Default(300)
	cfg.OpenCallAtEnd = true
	msgs := withUsage(synthetic.Generate(cfg))
	sess, err := s.CreateSession(Session{Instructions: []string{"be brief"}}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := Totals{Chars: transcript.TotalChars(msgs), Open: []string{"call_open"}, Usage: &UsageTotals{},
		Originals: &OriginalCounts{Stored: len(msgs), Sent: len(msgs)}}
	for _, m := range msgs {
		if m.Usage != nil {
			want.Tokens += m.Usage.PromptTokens + m.Usage.CompletionTokens
			want.Usage.add(*m.Usage)
		}
	}
	if !reflect.DeepEqual(*sess.Head.Totals, want) {
		t.Fatalf("totals after create: %+v; want %+v", *sess.Head.Totals, want)
	}
	verify(t, s, sess.ID)

	// Appends: the open call's result, then a reply issuing two calls with its usage.
	if _, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleTool, ToolCallID: "call_open", Text: "ok"}); err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	if _, err := s.Append(sess.ID, transcript.Message{Role: transcript.RoleAssistant, Text: "two more",
		ToolCalls: []transcript.ToolCall{{ID: "a", Name: "run", Arguments: "{}"}, {ID: "b", Name: "run", Arguments: "{}"}},
		Usage:     &transcript.Usage{PromptTokens: 7, CompletionTokens: 3, CachedTokens: 5, CacheWriteTokens: 1}}); err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	got, _ := s.Session(sess.ID)
	if u := got.Head.Totals.Usage; u.Input != want.Usage.Input+7 || u.Cached != 5 || u.CacheWrite != 1 || u.Last.CachedTokens != 5 {
		t.Fatalf("usage after the append: %+v", *u)
	}
	if !slices.Equal(got.Head.Totals.Open, []string{"a", "b"}) || got.Head.Totals.Tokens != want.Tokens+10 {
		t.Fatalf("totals after appends: %+v", *got.Head.Totals)
	}

	// A compaction with a partial checkpoint, a reduced copy (it keeps the original's usage, not counted
	// again) and a recovered result for call a.
	v, _ := s.Transcript(sess.ID)
	reduced := v.Messages[280]
	reduced.ID, reduced.OriginalID, reduced.Truncated, reduced.Text = "", reduced.ID, true, "cut"
	reduced.Measure()
	last := len(v.Messages) - 1
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: 250,
		Insert:      []transcript.Message{{Role: transcript.RoleUser, Summary: true, Partial: true, Text: "checkpoint"}},
		Replace:     map[int]transcript.Message{280: reduced},
		InsertAfter: map[int][]transcript.Message{last: {{Role: transcript.RoleTool, ToolCallID: "a", Text: "recovered"}}}}
	after, err := s.Apply(sess.ID, rw)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, s, sess.ID)
	if tt := after.Head.Totals; !tt.LastPartial || !slices.Equal(tt.Open, []string{"b"}) || tt.Chars != transcript.TotalChars(rw.Apply(v.Messages)) {
		t.Fatalf("totals after the rewrite: %+v", *tt)
	}
	// 250 dropped and the one reduced are compacted originals; the checkpoint and the reduced copy are not
	// originals, the recovered result is.
	if n, ok := after.Head.Totals.CompactedOriginals(); !ok || n != 251 || after.Head.Totals.Originals.Stored != len(msgs)+3 {
		t.Fatalf("originals after the rewrite: %+v, compacted %d", *after.Head.Totals.Originals, n)
	}
	// A later complete checkpoint clears LastPartial; the running totals survive a reopen.
	rw2 := transcript.Rewrite{BaseEpoch: after.Head.Epoch, BaseLen: after.Head.ViewLen, Drop: 1,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "full checkpoint"}}}
	if _, err := s.Apply(sess.ID, rw2); err != nil {
		t.Fatal(err)
	}
	s2 := reopen(t, s, dir)
	defer s2.Close()
	verify(t, s2, sess.ID)
	got, _ = s2.Session(sess.ID)
	if got.Head.Totals.LastPartial {
		t.Fatal("the last checkpoint is complete; LastPartial still set")
	}
	// Dropping the partial checkpoint compacts no original.
	if n, _ := got.Head.Totals.CompactedOriginals(); n != 251 {
		t.Fatalf("compacted originals after compacting the checkpoint: %d, want 251", n)
	}
}

func TestViewEntry_RoundTrip(t *testing.T) {
	for _, m := range []transcript.Message{
		{Role: transcript.RoleUser, Text: "héllo"},
		{Role: transcript.RoleUser, Summary: true, Partial: true, Text: "checkpoint"},
		{Role: transcript.RoleTool, ToolCallID: "call_2", Truncated: true, OriginalID: "m9", Text: "cut"},
		{Role: transcript.RoleTool, ToolCallID: "", Text: "no id"},
		{Role: transcript.RoleTool, ToolCallID: "call_1", Text: string(make([]byte, 300))},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "x", Name: "run"}, {ID: "", Name: "read", Arguments: "{}"}}},
	} {
		m.Measure()
		e := entryOf(&m, 1<<40+3)
		raw := e.encode()
		got, err := decodeEntry(raw)
		if err != nil || !got.equal(&e) {
			t.Fatalf("%+v: decoded %+v, %v", e, got, err)
		}
		for cut := 9; cut < len(raw); cut++ {
			if _, err := decodeEntry(raw[:cut]); err == nil {
				t.Fatalf("%+v cut to %d bytes: decoded", e, cut)
			}
		}
		if _, err := decodeEntry(append(raw, 0)); err == nil {
			t.Fatalf("%+v with a trailing byte: decoded", e)
		}
	}
	if e, err := decodeEntry(binary.BigEndian.AppendUint64(nil, 42)); err != errUncounted || e.seq != 42 {
		t.Fatalf("format-1 entry: %+v, %v", e, err)
	}
}

// writeFormat1 stores msgs as session id the way format 1 did: the head inside the record, view entries
// holding the sequence alone; view lists the sequences of the effective transcript. It marks the store
// format 1.
func writeFormat1(t *testing.T, s *Store, id string, msgs []transcript.Message, epoch uint64, view []uint64) {
	t.Helper()
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record, err := json.Marshal(map[string]any{"id": id, "title": "old", "workspace": "/w", "instructions": []string{"old rules"},
		"createdAt": created, "updatedAt": created.Add(time.Hour),
		"head": map[string]any{"epoch": epoch, "nextSeq": len(msgs), "viewLen": len(view)}})
	if err != nil {
		t.Fatal(err)
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	set := func(k, v []byte) {
		if err := wb.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set(formatKey, []byte("1"))
	set(sessionKey(id), record)
	for seq, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		set(historyKey(id, uint64(seq)), raw)
	}
	for pos, seq := range view {
		set(viewKey(id, epoch, pos), binary.BigEndian.AppendUint64(nil, seq))
	}
	if err := wb.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestStore_ReadsFormat1 opens a store written by format 1 — a compacted session whose history holds more than
// its view, and one left half counted by a crash — and checks that it reads as before, that the totals are
// counted once and kept, and that the session takes appends and rewrites.
func TestStore_ReadsFormat1(t *testing.T) {
	s, dir := openTemp(t)
	cfg := synthetic.Default(200)
	cfg.OpenCallAtEnd = true
	msgs := withUsage(synthetic.Generate(cfg))
	ckpt := transcript.Message{ID: "ckpt", Role: transcript.RoleUser, Summary: true, Partial: true, Text: "checkpoint"}
	history := append(append([]transcript.Message{}, msgs...), ckpt)
	start := 150
	for !safeAt(msgs, start) {
		start++
	}
	view := []uint64{uint64(len(msgs))} // the checkpoint, then the kept tail
	for seq := start; seq < len(msgs); seq++ {
		view = append(view, uint64(seq))
	}
	wantView := append([]transcript.Message{ckpt}, msgs[start:]...)
	writeFormat1(t, s, "old", history, 3, view)
	writeFormat1(t, s, "crashed", history, 3, view)
	// The count of "crashed" was cut after rewriting its first entries.
	if err := s.db.Update(func(txn *badger.Txn) error {
		for pos := 0; pos < 5; pos++ {
			e := entryOf(&wantView[pos], view[pos])
			if err := txn.Set(viewKey("crashed", 3, pos), e.encode()); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	defer func() { _ = s.Close() }()

	list, err := s.Sessions("")
	if err != nil || len(list) != 2 || list[0].Head.ViewLen != len(view) || list[0].Head.Totals != nil || list[0].Instructions[0] != "old rules" {
		t.Fatalf("list of format-1 sessions: %+v, %v", list, err)
	}
	wantTokens, wantUsage := 0, &UsageTotals{}
	for _, m := range msgs {
		if m.Usage != nil {
			wantTokens += m.Usage.PromptTokens + m.Usage.CompletionTokens
			wantUsage.add(*m.Usage)
		}
	}
	for _, id := range []string{"old", "crashed"} {
		sess, err := s.Session(id)
		if err != nil {
			t.Fatal(err)
		}
		want := Totals{Chars: transcript.TotalChars(wantView), LastPartial: true, Open: []string{"call_open"}, Tokens: wantTokens, Usage: wantUsage,
			Originals: &OriginalCounts{Stored: len(msgs), Sent: len(msgs) - start}}
		if sess.Head.Epoch != 3 || sess.Head.ViewLen != len(view) || sess.Title != "old" || !reflect.DeepEqual(*sess.Head.Totals, want) {
			t.Fatalf("%s: %+v, totals %+v; want %+v", id, sess, *sess.Head.Totals, want)
		}
		verify(t, s, id)
		v, err := s.Transcript(id)
		if err != nil {
			t.Fatal(err)
		}
		sameMessages(t, v.Messages, wantView)
	}

	// Counted once: the head and the marked format are on disk, the record keeps its fields.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err = Open(DefaultOptions(dir)); err != nil {
		t.Fatal(err)
	}
	_ = s.db.View(func(txn *badger.Txn) error {
		sess, counted, err := getSession(txn, "old")
		if err != nil || !counted || sess.Instructions[0] != "old rules" || !sess.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
			t.Fatalf("after counting: %+v counted=%v %v", sess, counted, err)
		}
		item, err := txn.Get(formatKey)
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := item.ValueCopy(nil); string(raw) != strconv.Itoa(FormatVersion) {
			t.Fatalf("format %q after opening a format-1 store", raw)
		}
		return nil
	})
	if _, err := s.Append("old", transcript.Message{Role: transcript.RoleTool, ToolCallID: "call_open", Text: "late"}); err != nil {
		t.Fatal(err)
	}
	v, _ := s.Transcript("old")
	if _, err := s.Apply("old", transcript.Rewrite{BaseEpoch: 3, BaseLen: len(v.Messages), Drop: 1,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "new"}}}); err != nil {
		t.Fatal(err)
	}
	verify(t, s, "old")
}

// TestStore_CountsOriginalsOfAnOlderHead: a session whose head was written before originals were counted
// keeps its other totals and gets its originals counted on its next read, once.
func TestStore_CountsOriginalsOfAnOlderHead(t *testing.T) {
	s, dir := openTemp(t)
	msgs := withUsage(synthetic.Generate(synthetic.Default(120)))
	sess, err := s.CreateSession(Session{Title: "before"}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	start := 80
	for !safeAt(msgs, start) {
		start++
	}
	if sess, err = s.Apply(sess.ID, transcript.Rewrite{BaseEpoch: sess.Head.Epoch, BaseLen: len(msgs), Drop: start,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}}}); err != nil {
		t.Fatal(err)
	}
	want := *sess.Head.Totals
	// The head as the previous release wrote it: no originals.
	if err := s.db.Update(func(txn *badger.Txn) error {
		old := sess.Head
		totals := *old.Totals
		totals.Originals = nil
		old.Totals = &totals
		raw, err := json.Marshal(headJSON{Head: old, UpdatedAt: sess.UpdatedAt})
		if err != nil {
			return err
		}
		return txn.Set(headKey(sess.ID), raw)
	}); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s, dir)
	defer func() { _ = s.Close() }()
	list, err := s.Sessions("")
	if err != nil || len(list) != 1 || list[0].Head.Totals == nil || list[0].Head.Totals.Originals != nil {
		t.Fatalf("listed before its next read: %+v, %v", list, err)
	}
	if _, ok := list[0].Head.Totals.CompactedOriginals(); ok {
		t.Fatal("a head without originals says how many were compacted")
	}
	got, err := s.Session(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got.Head.Totals, want) {
		t.Fatalf("recounted totals %+v; before %+v", *got.Head.Totals, want)
	}
	if n, _ := got.Head.Totals.CompactedOriginals(); n != start {
		t.Fatalf("compacted originals %d, want %d", n, start)
	}
	verify(t, s, sess.ID)
	_ = s.db.View(func(txn *badger.Txn) error {
		if _, counted, err := getSession(txn, sess.ID); err != nil || !counted {
			t.Fatalf("the head was not written back with its originals: counted=%v %v", counted, err)
		}
		return nil
	})
}

// TestStore_FormatTwoRecordLayout checks what the keys hold: the record without its head, the head apart.
func TestStore_FormatTwoRecordLayout(t *testing.T) {
	s, _ := openTemp(t)
	sess, err := s.CreateSession(Session{Title: "t", Instructions: []string{"long rules"}}, synthetic.Generate(synthetic.Default(5)))
	if err != nil {
		t.Fatal(err)
	}
	_ = s.db.View(func(txn *badger.Txn) error {
		var fields map[string]any
		for key, want := range map[string][]string{"s/" + sess.ID: {"createdAt", "id", "instructions", "title", "workspace"},
			"t/" + sess.ID: {"epoch", "nextSeq", "totals", "updatedAt", "viewLen"}} {
			item, err := txn.Get([]byte(key))
			if err != nil {
				t.Fatal(err)
			}
			fields = nil
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &fields) }); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range fields {
				got = append(got, k)
			}
			slices.Sort(got)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s holds %v; want %v", key[:2], got, want)
			}
		}
		return nil
	})
}
