package compaction_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/compaction/compactiontest"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

var helperIDs int

func nextID() string { helperIDs++; return fmt.Sprint("h", helperIDs) }

func user(t string) transcript.Message {
	return transcript.Message{ID: nextID(), Role: transcript.RoleUser, Text: t}
}

func asst(t string, calls ...string) transcript.Message {
	m := transcript.Message{ID: nextID(), Role: transcript.RoleAssistant, Text: t}
	for _, c := range calls {
		m.ToolCalls = append(m.ToolCalls, transcript.ToolCall{ID: c, Name: "f", Arguments: "{}"})
	}
	return m
}
func result(c, t string) transcript.Message {
	return transcript.Message{ID: nextID(), Role: transcript.RoleTool, ToolCallID: c, Text: t}
}
func ckpt() transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}
}

func TestFindSpan(t *testing.T) {
	for _, tc := range []struct {
		name       string
		msgs       []transcript.Message
		keep       int
		end        int
		ok         bool
		withinTurn bool
	}{
		{"keeps last two turns", []transcript.Message{user("1"), asst("a"), user("2"), asst("b"), user("3"), asst("c")}, 2, 2, true, false},
		{"fewer turns than keepTurns keeps the last", []transcript.Message{user("1"), asst("a"), user("2"), asst("b")}, 5, 2, true, false},
		{"fewer turns than keepTurns summarizes only the first", []transcript.Message{user("1"), asst("a"), user("2"), asst("b"), user("3"), asst("c"), user("4"), asst("d")}, 20, 2, true, false},
		{"keepTurns 0 keeps the last turn", []transcript.Message{user("1"), asst("a"), user("2"), asst("b")}, 0, 2, true, false},
		{"single long turn cuts at last safe boundary between calls",
			[]transcript.Message{user("1"), asst("", "a"), result("a", "x"), asst("", "b"), result("b", "y"), asst("", "c"), result("c", "z")}, 2, 5, true, true},
		{"parallel calls are not split",
			[]transcript.Message{user("1"), asst("", "a", "b"), result("a", "x"), result("b", "y"), asst("", "c"), result("c", "z"), asst("done")}, 2, 6, true, true},
		{"a turn boundary inside open calls moves earlier",
			[]transcript.Message{user("1"), asst("", "a"), result("a", "r"), asst("", "b"), user("2"), result("b", "y"), asst("ok"), user("3"), asst("c")}, 2, 3, true, false},
		{"only a checkpoint and one turn", []transcript.Message{ckpt(), user("1"), asst("a")}, 2, 0, false, false},
		{"checkpoint plus two turns summarizes the first", []transcript.Message{ckpt(), user("1"), asst("a"), user("2"), asst("b")}, 1, 3, true, false},
		{"one message", []transcript.Message{user("1")}, 2, 0, false, false},
		{"no user messages", []transcript.Message{asst("", "a"), result("a", "x"), asst("", "b"), result("b", "y")}, 2, 2, true, true},
		{"empty", nil, 2, 0, false, false},
		{"a kept turn that starts while a call is open leaves only the last turn",
			[]transcript.Message{asst("", "a"), user("1"), user("2"), result("a", "x"), user("3")}, 2, 4, true, false},
		{"open call at the end", []transcript.Message{user("1"), asst("a"), user("2"), asst("", "x")}, 1, 2, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span, ok := compaction.FindSpan(tc.msgs, tc.keep)
			if ok != tc.ok || (ok && (span.End != tc.end || span.WithinTurn != tc.withinTurn)) {
				t.Fatalf("FindSpan = %+v, %v; want end %d within %v, %v", span, ok, tc.end, tc.withinTurn, tc.ok)
			}
			if ok {
				rw := transcript.Rewrite{BaseLen: len(tc.msgs), Drop: span.End, Insert: []transcript.Message{ckpt()}}
				if err := compactiontest.Check(tc.msgs, rw, nil, compactiontest.Limits{KeepTurns: tc.keep}); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestFindSpan_Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := fromBytes(rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(t, "program"), rapid.Bool().Draw(t, "closed"))
		keep := rapid.IntRange(0, 20).Draw(t, "keep")
		checkSpan(t, msgs, keep)
	})
}

// TestFindSpan_MoreKeepTurnsNeverKeepsFewer: raising keepTurns never moves the cut later (never keeps fewer
// messages); it used to keep only the last turn once keepTurns passed the number of turns.
func TestFindSpan_MoreKeepTurnsNeverKeepsFewer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := fromBytes(rapid.SliceOfN(rapid.Byte(), 0, 80).Draw(t, "program"), rapid.Bool().Draw(t, "closed"))
		prev, prevOK := compaction.FindSpan(msgs, 1)
		for keep := 2; keep <= 20; keep++ {
			span, ok := compaction.FindSpan(msgs, keep)
			if ok != prevOK || ok && span.End > prev.End {
				t.Fatalf("keepTurns %d cuts at %d (ok %v); keepTurns %d at %d (ok %v)", keep, span.End, ok, keep-1, prev.End, prevOK)
			}
			prev, prevOK = span, ok
		}
	})
}

func checkSpan(t interface{ Fatalf(string, ...any) }, msgs []transcript.Message, keep int) {
	span, ok := compaction.FindSpan(msgs, keep)
	if !ok {
		return
	}
	rw := transcript.Rewrite{BaseLen: len(msgs), Drop: span.End, Insert: []transcript.Message{ckpt()}}
	if err := compactiontest.Check(msgs, rw, nil, compactiontest.Limits{KeepTurns: keep}); err != nil {
		t.Fatalf("keep %d, end %d: %v", keep, span.End, err)
	}
}

func FuzzFindSpan(f *testing.F) {
	f.Add([]byte{0, 2, 4, 3, 4, 4, 0, 1}, uint8(2))
	f.Add([]byte{0, 11, 12, 19, 20, 21, 7, 6}, uint8(0))
	f.Fuzz(func(t *testing.T, program []byte, keep uint8) {
		checkSpan(t, fromBytes(program, len(program)%2 == 0), int(keep%21))
	})
}

func TestLastTurnSpan(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []transcript.Message
		end  int
		ok   bool
	}{
		{"cuts after the last result, before the closing answer",
			[]transcript.Message{user("1"), asst("a"), user("2"), asst("", "a"), result("a", "x"), asst("", "b"), result("b", "y"), asst("done")}, 7, true},
		{"keeps the call and result at the end",
			[]transcript.Message{user("1"), asst("", "a"), result("a", "x"), asst("", "b"), result("b", "y")}, 3, true},
		{"a last turn without calls has no cut inside it", []transcript.Message{user("1"), asst("", "a"), result("a", "x"), user("2"), asst("b")}, 0, false},
		{"only a checkpoint before", []transcript.Message{ckpt(), asst("", "a"), result("a", "x")}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span, ok := compaction.LastTurnSpan(tc.msgs)
			if ok != tc.ok || ok && (span.End != tc.end || !span.WithinTurn) {
				t.Fatalf("LastTurnSpan = %+v, %v; want end %d, %v", span, ok, tc.end, tc.ok)
			}
		})
	}
}

// TestCheck_G2RejectsCutsIntoTheKeptTurns: the checker the property tests rely on refuses a cut that keeps
// fewer turns, or cuts inside the last one, while a safe cut before them existed.
func TestCheck_G2RejectsCutsIntoTheKeptTurns(t *testing.T) {
	msgs := []transcript.Message{user("1"), asst("a"), user("2"), asst("", "b"), result("b", "y"), user("3"), asst("", "c"), result("c", "z"), asst("d")}
	for _, drop := range []int{5, 8} {
		rw := transcript.Rewrite{BaseLen: len(msgs), Drop: drop, Insert: []transcript.Message{ckpt()}}
		if err := compactiontest.Check(msgs, rw, nil, compactiontest.Limits{KeepTurns: 2}); err == nil {
			t.Errorf("a cut at %d with keepTurns 2 passed the G2 check", drop)
		}
	}
	rw := transcript.Rewrite{BaseLen: len(msgs), Drop: 2, Insert: []transcript.Message{ckpt()}}
	if err := compactiontest.Check(msgs, rw, nil, compactiontest.Limits{KeepTurns: 2}); err != nil {
		t.Errorf("the keepTurns cut failed the check: %v", err)
	}
}
