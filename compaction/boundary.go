package compaction

import "github.com/alisio-lsp/alisio-lsp/transcript"

// Span is the part of a transcript a compaction summarizes: msgs[:End] is replaced by a checkpoint and
// msgs[End:] is kept verbatim. End is always a safe boundary (G1).
type Span struct {
	End int
	// WithinTurn reports that the cut falls inside the last turn (a single long turn, G2).
	WithinTurn bool
}

// FindSpan chooses what to summarize (G1, G2): everything before the last keepTurns turns, or, when there are
// fewer turns or keepTurns is 0, everything before the last turn; when that leaves nothing new to summarize,
// the cut moves inside the last turn to its last safe boundary between calls (LastTurnSpan). ok is false when
// no cut would summarize anything beyond an existing checkpoint.
func FindSpan(msgs []transcript.Message, keepTurns int) (span Span, ok bool) {
	starts := transcript.TurnStarts(msgs)
	if len(starts) > 0 {
		target := starts[len(starts)-1]
		if keepTurns > 0 && len(starts) > keepTurns {
			target = starts[len(starts)-keepTurns]
		}
		if cut := lastSafeAtOrBefore(msgs, target, false); cut > summaryFloor(msgs) {
			return Span{End: cut}, true
		}
	}
	return LastTurnSpan(msgs)
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
