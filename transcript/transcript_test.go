package transcript

import (
	"fmt"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

func msgs(n int) []Message {
	out := make([]Message, n)
	for i := range out {
		out[i] = Message{ID: fmt.Sprint("m", i), Role: RoleUser, Text: fmt.Sprint(i)}
	}
	return out
}

func genRewrite(t *rapid.T, n int, label string) Rewrite {
	drop := rapid.IntRange(0, n).Draw(t, label+"drop")
	rw := Rewrite{BaseLen: n, Drop: drop, Replace: map[int]Message{}}
	for i := rapid.IntRange(0, 2).Draw(t, label+"ins"); i > 0; i-- {
		rw.Insert = append(rw.Insert, Message{ID: fmt.Sprint(label, "ins", i), Role: RoleUser, Summary: true})
	}
	for pos := drop; pos < n; pos++ {
		if rapid.Bool().Draw(t, fmt.Sprint(label, "rep", pos)) {
			rw.Replace[pos] = Message{ID: fmt.Sprint(label, "rep", pos), Role: RoleTool, Truncated: true}
		}
	}
	return rw
}

func TestRewrite_ThenEqualsSequentialApply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		view := msgs(rapid.IntRange(0, 12).Draw(t, "n"))
		a := genRewrite(t, len(view), "a")
		mid := a.Apply(view)
		b := genRewrite(t, len(mid), "b")
		for pos := range b.Replace {
			if pos < len(a.Insert) {
				delete(b.Replace, pos) // next never replaces inserted checkpoints
			}
		}
		want := b.Apply(mid)
		got := a.Then(b).Apply(view)
		if !reflect.DeepEqual(ids(got), ids(want)) {
			t.Fatalf("composed %v; sequential %v", ids(got), ids(want))
		}
	})
}

func ids(ms []Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestSafeBoundaries(t *testing.T) {
	call := func(ids ...string) Message {
		m := Message{Role: RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: id, Name: "f"})
		}
		return m
	}
	res := func(id string) Message { return Message{Role: RoleTool, ToolCallID: id} }
	u := Message{Role: RoleUser, Text: "u"}
	ms := []Message{u, call("a", "b"), res("a"), res("b"), call("c"), res("c"), u, call("d")}
	if got, want := SafeBoundaries(ms), []int{0, 1, 4, 6, 7}; !reflect.DeepEqual(got, want) {
		t.Fatalf("safe boundaries %v; want %v", got, want)
	}
	if got := UnansweredCalls(ms); len(got) != 1 || got[0].ID != "d" {
		t.Fatalf("unanswered %v", got)
	}
	if got := TurnStarts(append(ms, Message{Role: RoleUser, Summary: true})); !reflect.DeepEqual(got, []int{0, 6}) {
		t.Fatalf("turn starts %v (checkpoints do not start turns)", got)
	}
}

func TestChars_CountsCodePointsOfWhatIsSent(t *testing.T) {
	m := Message{Role: RoleAssistant, Text: "héllo☃", Reasoning: "ab", ToolCalls: []ToolCall{{ID: "id-not-counted", Name: "f", Arguments: `{"a":"é"}`}},
		Items: []ProviderItem{{Kind: "x", Data: []byte(`"opaque"`)}}}
	if got := m.Chars(); got != 6+2+1+9 {
		t.Fatalf("chars %d; want 18", got)
	}
	if EstimateTokens(18) != 5 || EstimateTokens(0) != 0 || EstimateTokens(4) != 1 {
		t.Fatal("estimate is ceil(chars/4)")
	}
}
