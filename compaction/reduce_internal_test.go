package compaction

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// referenceReduce is the R2 walk as SPEC words it, every cut made on the spot: the model Reduce must match.
func referenceReduce(msgs []transcript.Message, target int) Reduction {
	sizes := make([]int, len(msgs))
	total := 0
	for i := range msgs {
		sizes[i] = msgs[i].Chars()
		total += sizes[i]
	}
	red := Reduction{Replace: map[int]transcript.Message{}, Fits: total <= target}
	for round := 0; round < len(ToolCaps) && !red.Fits; round++ {
		var cands []int
		for i := range msgs {
			if c := capFor(&msgs[i], round); c > 0 && sizes[i] > c {
				cands = append(cands, i)
			}
		}
		sort.SliceStable(cands, func(a, b int) bool { return sizes[cands[a]] > sizes[cands[b]] })
		for _, pos := range cands {
			cur, ok := red.Replace[pos]
			if !ok {
				cur = msgs[pos]
			}
			cut := cutMessage(cur, sizes[pos], capFor(&msgs[pos], round))
			n := cut.Chars()
			if n >= sizes[pos] {
				continue
			}
			red.Replace[pos] = markCut(cut, &msgs[pos])
			total -= sizes[pos] - n
			sizes[pos] = n
			if total <= target {
				red.Fits = true
				break
			}
		}
	}
	red.Chars = total
	return red
}

// TestReduce_MatchesTheReference: cutting plain texts once, at the end, gives exactly the cuts of the walk
// that cuts them round after round, on random transcripts (ASCII and multi-byte text, reasoning, tool
// calls with JSON arguments, earlier cuts, checkpoints) and random targets.
func TestReduce_MatchesTheReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "messages")
		var msgs []transcript.Message
		for i := 0; i < n; i++ {
			size := rapid.IntRange(0, 30_000).Draw(t, "size")
			word := rapid.SampledFrom([]string{"go ", "é ", "日本 ", "x"}).Draw(t, "word")
			text := strings.Repeat(word, size/len(word)+1)[:size]
			text = strings.ToValidUTF8(text, "?")
			m := transcript.Message{ID: fmt.Sprint("m", i), Role: transcript.RoleTool, ToolCallID: fmt.Sprint("c", i), Text: text}
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 1:
				m.Role, m.ToolCallID = transcript.RoleUser, ""
			case 2:
				m.Role, m.ToolCallID, m.Reasoning = transcript.RoleAssistant, "", strings.Repeat("r", rapid.IntRange(0, 20_000).Draw(t, "reasoning"))
			case 3:
				m.Role, m.ToolCallID = transcript.RoleAssistant, ""
				m.ToolCalls = []transcript.ToolCall{{ID: fmt.Sprint("k", i), Name: "write_file",
					Arguments: fmt.Sprintf(`{"path":"a.go","content":%q}`, strings.Repeat("y", rapid.IntRange(0, 20_000).Draw(t, "args")))}}
			case 4:
				m.Role, m.ToolCallID, m.Summary = transcript.RoleUser, "", true
			case 5:
				m.Truncated, m.OriginalID, m.Text = true, "orig", text+Marker
			}
			m.Measure()
			msgs = append(msgs, m)
		}
		target := rapid.IntRange(0, transcript.TotalChars(msgs)+1).Draw(t, "target")
		got, want := Reduce(msgs, target), referenceReduce(msgs, target)
		if got.Chars != want.Chars || got.Fits != want.Fits || !reflect.DeepEqual(got.Replace, want.Replace) {
			t.Fatalf("Reduce: %d chars, fits %v, %d cuts; the reference: %d chars, fits %v, %d cuts",
				got.Chars, got.Fits, len(got.Replace), want.Chars, want.Fits, len(want.Replace))
		}
	})
}
