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
// the cut moves inside the last turn to its last safe boundary between calls. ok is false when no cut would
// summarize anything beyond an existing checkpoint.
func FindSpan(msgs []transcript.Message, keepTurns int) (span Span, ok bool) {
	safe := transcript.SafeBoundaries(msgs)
	starts := transcript.TurnStarts(msgs)
	floor := 0 // a cut must summarize at least one message that is not a checkpoint
	for floor < len(msgs) && msgs[floor].Summary {
		floor++
	}
	lastSafeAtOrBefore := func(p int, afterCall bool) int {
		best := -1
		for _, s := range safe {
			if s > p {
				break
			}
			if !afterCall || s > 0 && msgs[s-1].Role == transcript.RoleTool {
				best = s
			}
		}
		return best
	}
	if len(starts) > 0 {
		target := starts[len(starts)-1]
		if keepTurns > 0 && len(starts) > keepTurns {
			target = starts[len(starts)-keepTurns]
		}
		if cut := lastSafeAtOrBefore(target, false); cut > floor {
			return Span{End: cut}, true
		}
	}
	// A single long turn: cut at its last safe boundary between calls (right after a tool result), keeping at
	// least one message.
	lastTurn := 0
	if len(starts) > 0 {
		lastTurn = starts[len(starts)-1]
	}
	if cut := lastSafeAtOrBefore(len(msgs)-1, true); cut > floor && cut > lastTurn {
		return Span{End: cut, WithinTurn: true}, true
	}
	return Span{}, false
}
