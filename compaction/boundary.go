package compaction

import "github.com/alisio-lsp/alisio-lsp/transcript"

// Span is the part of a transcript a compaction summarizes: msgs[:End] is replaced by a checkpoint and
// msgs[End:] is kept verbatim. End is always a safe boundary (G1).
type Span struct {
	End int
	// WithinTurn reports that the cut falls inside the last turn (a single long turn, G2).
	WithinTurn bool
}

// FindSpan chooses what to summarize (G1, G2): everything before the last keepTurns turns (0 counts as 1).
// When the session has no more turns than that, it keeps as many recent turns as leave an earlier turn to
// summarize, so that a larger keepTurns never keeps fewer turns; when even one kept turn leaves nothing new to
// summarize, the cut moves inside the last turn to its last safe boundary between calls (LastTurnSpan). ok is
// false when no cut would summarize anything beyond an existing checkpoint.
func FindSpan(msgs []transcript.Message, keepTurns int) (span Span, ok bool) {
	starts := transcript.TurnStarts(msgs)
	floor := summaryFloor(msgs)
	for keep := min(max(keepTurns, 1), len(starts)); keep >= 1; keep-- {
		if cut := lastSafeAtOrBefore(msgs, starts[len(starts)-keep], false); cut > floor {
			return Span{End: cut}, true
		}
	}
	return LastTurnSpan(msgs)
}

// FittingSpanOptions is how deep a compaction must cut for what it keeps to fit limit (instructions and
// transcript, in chars) once reduced (R1–R6), as KeepTurns and WithinLastTurn of Options: the keepTurns cut
// when what it keeps can fit, else the most recent turns that can (down to the last one), else the cut inside
// the last turn at its last safe boundary, else the last turn alone. It is how the budget compaction (L1) and
// a manual compaction of a session over its hard limit keep as much recent work as fits.
func FittingSpanOptions(view []transcript.Message, keepTurns, instructionsChars, limit int) (keep int, withinLastTurn bool) {
	for keep = max(keepTurns, 1); keep >= 1; keep-- {
		if keptCanFit(view, keep, instructionsChars, limit) {
			return keep, false
		}
	}
	_, deeper := LastTurnSpan(view)
	return 1, deeper
}

// LastTurnSpan is the deepest cut G2 allows, for a single long turn: inside the last turn, at its last safe
// boundary between calls (right after a tool result), keeping at least one message. ok is false when the last
// turn has no such boundary that would summarize anything beyond an existing checkpoint.
func LastTurnSpan(msgs []transcript.Message) (span Span, ok bool) {
	lastTurn := 0
	if starts := transcript.TurnStarts(msgs); len(starts) > 0 {
		lastTurn = starts[len(starts)-1]
	}
	if cut := lastSafeAtOrBefore(msgs, len(msgs)-1, true); cut > summaryFloor(msgs) && cut > lastTurn {
		return Span{End: cut, WithinTurn: true}, true
	}
	return Span{}, false
}

// summaryFloor is the number of leading checkpoints: a cut must summarize at least one message beyond them.
func summaryFloor(msgs []transcript.Message) int {
	floor := 0
	for floor < len(msgs) && msgs[floor].Summary {
		floor++
	}
	return floor
}

// lastSafeAtOrBefore is the last safe boundary of msgs at or before p, only one right after a tool result when
// afterCall is set (-1: none).
func lastSafeAtOrBefore(msgs []transcript.Message, p int, afterCall bool) int {
	best := -1
	for _, s := range transcript.SafeBoundaries(msgs) {
		if s > p {
			break
		}
		if !afterCall || s > 0 && msgs[s-1].Role == transcript.RoleTool {
			best = s
		}
	}
	return best
}
