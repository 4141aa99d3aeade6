// Package compactiontest checks the guarantees of SPEC §2 and §4 (G1–G4, R1–R6) on any rewrite of any
// transcript. Every test that produces a transcript runs it.
package compactiontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// Limits are the budget the rewrite was made under; zero MaxContextChars skips the hard-limit check.
type Limits struct {
	MaxContextChars   int
	InstructionsChars int
	// KeepTurns, when compaction ran, is checked against the kept tail (G2); -1 skips the check.
	KeepTurns int
}

// Check verifies that rw, applied to before, yields a valid transcript that keeps every guarantee:
//   - G1: no call without its result and no result without its call (except calls already uncertain before),
//     call IDs and names byte-equal to the originals;
//   - order and roles kept, kept messages unchanged except marked cuts (R3);
//   - every cut is marked Truncated with OriginalID, ends with the marker, respects the first cap of its kind,
//     keeps tool call arguments valid JSON of the same shape (R3a);
//   - checkpoints are never cut (R5);
//   - G2: the last turn (or, inside a single long turn, the last message) is kept;
//   - H1/F1: the result is within the hard limit, or err is the F1 BudgetError.
func Check(before []transcript.Message, rw transcript.Rewrite, err error, lim Limits) error {
	if rw.Drop < 0 || rw.Drop > len(before) {
		return fmt.Errorf("rewrite drops %d of %d messages", rw.Drop, len(before))
	}
	after := rw.Apply(before)
	if e := transcripttest.CheckStructure(after); e != nil {
		return fmt.Errorf("G1: %w", e)
	}
	wasOpen := map[string]bool{}
	for _, c := range transcript.UnansweredCalls(before) {
		wasOpen[c.ID] = true
	}
	for _, c := range transcript.UnansweredCalls(after) {
		if !wasOpen[c.ID] {
			return fmt.Errorf("G1: call %s lost its result", c.ID)
		}
	}
	for i, m := range rw.Insert {
		if m.Truncated {
			return fmt.Errorf("R5: inserted message %d is cut", i)
		}
		if len(m.ToolCalls) > 0 || m.Role == transcript.RoleTool {
			return fmt.Errorf("inserted message %d carries tool calls or results", i)
		}
	}
	if rw.Drop > 0 {
		if e := checkSafeCut(before, rw.Drop); e != nil {
			return e
		}
	}
	for pos := rw.Drop; pos < len(before); pos++ {
		orig := before[pos]
		got := after[len(rw.Insert)+pos-rw.Drop]
		if _, cut := rw.Replace[pos]; !cut {
			if !reflect.DeepEqual(orig, got) {
				return fmt.Errorf("R3: kept message %d changed without being marked", pos)
			}
			continue
		}
		if e := checkCut(orig, got); e != nil {
			return fmt.Errorf("message %d: %w", pos, e)
		}
	}
	if lim.KeepTurns >= 0 && rw.Drop > 0 {
		if e := checkKeptTurns(before, rw.Drop, lim.KeepTurns); e != nil {
			return e
		}
	}
	if lim.MaxContextChars > 0 {
		total := lim.InstructionsChars + transcript.TotalChars(after)
		var be *compaction.BudgetError
		if total > lim.MaxContextChars && !errors.As(err, &be) {
			return fmt.Errorf("H1: %d chars over the limit %d without the F1 error (err=%v)", total, lim.MaxContextChars, err)
		}
	}
	return nil
}

func checkSafeCut(before []transcript.Message, drop int) error {
	for _, p := range transcript.SafeBoundaries(before) {
		if p == drop {
			return nil
		}
	}
	return fmt.Errorf("G1: compaction cut at %d, which is not a safe boundary", drop)
}

func checkCut(orig, got transcript.Message) error {
	if orig.Summary {
		return fmt.Errorf("R5: a checkpoint was cut")
	}
	if !got.Truncated || got.OriginalID == "" {
		return fmt.Errorf("R3: a cut copy is not marked truncated with its original")
	}
	if orig.Truncated && orig.OriginalID != got.OriginalID || !orig.Truncated && got.OriginalID != orig.ID {
		return fmt.Errorf("R4: cut copy points to %q, not its original", got.OriginalID)
	}
	if got.Role != orig.Role || got.ToolCallID != orig.ToolCallID || got.Summary != orig.Summary || len(got.ToolCalls) != len(orig.ToolCalls) {
		return fmt.Errorf("R3: a cut changed the role, call ID or calls")
	}
	if got.Chars() >= orig.Chars() {
		return fmt.Errorf("R2: a cut that does not shorten (%d → %d chars)", orig.Chars(), got.Chars())
	}
	pairs := [][2]string{{orig.Text, got.Text}, {orig.Reasoning, got.Reasoning}}
	if orig.HasSignedReasoning() {
		if err := checkThinkingKept(orig, got); err != nil {
			return err
		}
		pairs = pairs[:1]
	}
	for _, pair := range pairs {
		if pair[0] != pair[1] && !strings.HasSuffix(pair[1], compaction.Marker) {
			return fmt.Errorf("R3: cut text does not end with the marker")
		}
		if pair[0] != pair[1] && !strings.HasPrefix(pair[0], strings.TrimSuffix(pair[1], compaction.Marker)) {
			return fmt.Errorf("R3: cut text is not a prefix of the original")
		}
	}
	for i, c := range got.ToolCalls {
		o := orig.ToolCalls[i]
		if c.ID != o.ID || c.Name != o.Name {
			return fmt.Errorf("G1/R3a: call %d changed ID or name", i)
		}
		if c.Arguments != o.Arguments {
			if err := sameShape(o.Arguments, c.Arguments); err != nil {
				return fmt.Errorf("R3a: call %s: %w", c.ID, err)
			}
		}
	}
	limit := compaction.TextCaps[0]
	if got.Role == transcript.RoleTool {
		limit = compaction.ToolCaps[0]
	}
	if len(got.ToolCalls) == 0 && got.Reasoning == "" && utf8.RuneCountInString(got.Text) > limit {
		return fmt.Errorf("R2: cut to %d chars, over the first cap %d", got.Chars(), limit)
	}
	return nil
}

// checkThinkingKept verifies that a cut kept signed Anthropic thinking blocks unchanged: only whole blocks are
// dropped, oldest first, and the reasoning text is the remaining blocks' text.
func checkThinkingKept(orig, got transcript.Message) error {
	ob, _ := orig.ThinkingBlocks()
	gb, _ := got.ThinkingBlocks()
	if len(gb) > len(ob) || !reflect.DeepEqual(gb, ob[len(ob)-len(gb):]) {
		return fmt.Errorf("R3: a signed thinking block was changed, not dropped whole")
	}
	if got.Reasoning != transcript.ReasoningOf(gb) {
		return fmt.Errorf("R3: the reasoning text is not the kept thinking blocks' text")
	}
	return nil
}

// sameShape checks that b is valid JSON with the same structure as a, every changed string ending with the marker.
func sameShape(a, b string) error {
	var va, vb any
	if json.Unmarshal([]byte(a), &va) != nil {
		return fmt.Errorf("original arguments were not JSON but were changed")
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		return fmt.Errorf("cut arguments are not valid JSON: %v", err)
	}
	var walk func(x, y any, path string) error
	walk = func(x, y any, path string) error {
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok || len(xv) != len(yv) {
				return fmt.Errorf("%s: object shape changed", path)
			}
			for k := range xv {
				if err := walk(xv[k], yv[k], path+"."+k); err != nil {
					return err
				}
			}
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				return fmt.Errorf("%s: array shape changed", path)
			}
			for i := range xv {
				if err := walk(xv[i], yv[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		case string:
			ys, ok := y.(string)
			if !ok {
				return fmt.Errorf("%s: string became %T", path, y)
			}
			if ys != xv && !strings.HasSuffix(ys, compaction.Marker) {
				return fmt.Errorf("%s: changed string does not end with the marker", path)
			}
		default:
			if !reflect.DeepEqual(x, y) {
				return fmt.Errorf("%s: non-string value changed", path)
			}
		}
		return nil
	}
	return walk(va, vb, "$")
}

// checkKeptTurns verifies G2: the cut keeps the last keepTurns turns (at least the last one). It keeps fewer
// only when every cut before them would summarize nothing beyond the leading checkpoints (a turn that starts
// while a call is still open has no safe boundary of its own), and cuts inside the last turn only when no cut
// before it could summarize anything.
func checkKeptTurns(before []transcript.Message, drop, keepTurns int) error {
	if drop >= len(before) {
		return fmt.Errorf("G2: the whole transcript was summarized")
	}
	starts := transcript.TurnStarts(before)
	if len(starts) == 0 {
		return nil
	}
	lastStart := starts[len(starts)-1]
	boundary := lastStart
	if keepTurns > 0 && len(starts) > keepTurns {
		boundary = starts[len(starts)-keepTurns]
	}
	if drop <= boundary {
		return nil
	}
	floor := 0
	for floor < len(before) && before[floor].Summary {
		floor++
	}
	if p := firstSafeCut(before, floor, boundary); p > 0 {
		return fmt.Errorf("G2: cut at %d summarizes part of the last %d turns although %d was a safe cut before them", drop, keepTurns, p)
	}
	if drop <= lastStart {
		return nil
	}
	if p := firstSafeCut(before, floor, lastStart); p > 0 {
		return fmt.Errorf("G2: cut inside the last turn although %d was a safe cut before it", p)
	}
	return nil
}

// firstSafeCut is the first safe boundary p of msgs with floor < p <= limit, or 0 when there is none.
func firstSafeCut(msgs []transcript.Message, floor, limit int) int {
	for _, p := range transcript.SafeBoundaries(msgs) {
		if p > floor && p <= limit {
			return p
		}
	}
	return 0
}
