package storage

import (
	"fmt"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestStore_MatchesTheReferenceSemantics runs random sequences of appends, rewrites (drop, insert, replace,
// insert-after) and reopenings against a real store and checks, after every step, that the effective
// transcript equals transcript.Rewrite.Apply's reference result and that the history holds every message ever
// stored, with exactly the ones outside the transcript marked compacted, and that the stored totals match a
// recount. Messages are of every kind the totals look at: tool calls (IDs drawn from a small pool, so that
// they repeat and collide), results, checkpoints (partial or not), reported usage and reduced copies.
func TestStore_MatchesTheReferenceSemantics(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := filepath.Join(t.TempDir(), "store")
		s, err := Open(DefaultOptions(dir).WithSyncWrites(false))
		if err != nil {
			rt.Fatal(err)
		}
		defer func() { _ = s.Close() }()
		sess, err := s.CreateSession(Session{Title: "model"}, nil)
		if err != nil {
			rt.Fatal(err)
		}
		var model []string // IDs of the effective transcript
		all := map[string]bool{}
		n := 0
		newMsg := func() transcript.Message {
			n++
			id := fmt.Sprintf("m%d", n)
			all[id] = true
			m := transcript.Message{ID: id, Role: transcript.RoleUser, Text: id}
			callID := func() string { return fmt.Sprintf("c%d", rapid.IntRange(0, 3).Draw(rt, "call")) }
			switch rapid.IntRange(0, 3).Draw(rt, "role") {
			case 1:
				m.Role = transcript.RoleAssistant
				for k := rapid.IntRange(0, 2).Draw(rt, "calls"); k > 0; k-- {
					m.ToolCalls = append(m.ToolCalls, transcript.ToolCall{ID: callID(), Name: "run", Arguments: "{}"})
				}
				if rapid.Bool().Draw(rt, "usage") {
					m.Usage = &transcript.Usage{PromptTokens: n * 10, CompletionTokens: n}
					m.Truncated = rapid.Bool().Draw(rt, "truncated")
				}
			case 2:
				m.Role, m.ToolCallID = transcript.RoleTool, callID()
			case 3:
				m.Summary, m.Partial = true, rapid.Bool().Draw(rt, "partial")
			}
			return m
		}
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			switch rapid.IntRange(0, 3).Draw(rt, "op") {
			case 0: // append
				k := rapid.IntRange(1, 4).Draw(rt, "k")
				var msgs []transcript.Message
				for i := 0; i < k; i++ {
					m := newMsg()
					msgs = append(msgs, m)
					model = append(model, m.ID)
				}
				if _, err := s.Append(sess.ID, msgs...); err != nil {
					rt.Fatal(err)
				}
			case 1, 2: // rewrite
				v, err := s.Transcript(sess.ID)
				if err != nil {
					rt.Fatal(err)
				}
				rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages),
					Drop: rapid.IntRange(0, len(v.Messages)).Draw(rt, "drop"), Replace: map[int]transcript.Message{},
					InsertAfter: map[int][]transcript.Message{}}
				for i := rapid.IntRange(0, 2).Draw(rt, "inserts"); i > 0; i-- {
					rw.Insert = append(rw.Insert, newMsg())
				}
				for pos := rw.Drop; pos < len(v.Messages); pos++ {
					switch rapid.IntRange(0, 4).Draw(rt, "kind") {
					case 0:
						rw.Replace[pos] = newMsg()
					case 1:
						rw.InsertAfter[pos] = []transcript.Message{newMsg()}
					}
				}
				if _, err := s.Apply(sess.ID, rw); err != nil {
					rt.Fatal(err)
				}
				model = ids(rw.Apply(v.Messages))
			case 3: // reopen
				if err := s.Close(); err != nil {
					rt.Fatal(err)
				}
				if s, err = Open(DefaultOptions(dir).WithSyncWrites(false)); err != nil {
					rt.Fatal(err)
				}
			}
			v, err := s.Transcript(sess.ID)
			if err != nil {
				rt.Fatal(err)
			}
			if err := s.VerifyTotals(sess.ID); err != nil {
				rt.Fatalf("step %d: %v", step, err)
			}
			if got := ids(v.Messages); fmt.Sprint(got) != fmt.Sprint(model) {
				rt.Fatalf("step %d: transcript %v; model %v", step, got, model)
			}
			h, err := s.History(sess.ID)
			if err != nil {
				rt.Fatal(err)
			}
			live := map[string]bool{}
			for _, id := range model {
				live[id] = true
			}
			seen := map[string]bool{}
			for _, m := range h {
				seen[m.ID] = true
				if m.Compacted == live[m.ID] {
					rt.Fatalf("step %d: %s compacted=%v but in transcript=%v", step, m.ID, m.Compacted, live[m.ID])
				}
			}
			if len(seen) != len(all) {
				rt.Fatalf("step %d: history has %d messages; %d were stored", step, len(seen), len(all))
			}
			checkPage(rt, s, sess.ID, false, v.Messages)
			checkPage(rt, s, sess.ID, true, h)
		}
	})
}

// checkPage reads a random page of the transcript (or the history) and checks it against the whole listing.
func checkPage(rt *rapid.T, s *Store, id string, includeCompacted bool, whole []transcript.Message) {
	offset := rapid.IntRange(-1, len(whole)+1).Draw(rt, "offset")
	limit := rapid.IntRange(0, len(whole)+1).Draw(rt, "limit")
	p, err := s.ReadPage(id, includeCompacted, offset, limit)
	if err != nil {
		rt.Fatal(err)
	}
	from, n := offset, limit
	if n == 0 {
		n = len(whole)
	}
	if from < 0 {
		from = max(len(whole)-n, 0)
	}
	from = min(from, len(whole))
	want := whole[from:min(from+n, len(whole))]
	if p.Total != len(whole) || p.Offset != from || fmt.Sprint(ids(p.Messages)) != fmt.Sprint(ids(want)) {
		rt.Fatalf("page (offset %d, limit %d, compacted %v): offset %d of %d, %v; want offset %d of %d, %v",
			offset, limit, includeCompacted, p.Offset, p.Total, ids(p.Messages), from, len(whole), ids(want))
	}
	for i := range want {
		if p.Messages[i].Compacted != want[i].Compacted {
			rt.Fatalf("page message %s: compacted %v, want %v", want[i].ID, p.Messages[i].Compacted, want[i].Compacted)
		}
	}
}

func ids(msgs []transcript.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}
