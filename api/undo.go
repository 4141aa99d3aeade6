package api

import (
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// UndoCompactionParams are alisio/undoCompaction's: the session (its most recent one when empty).
type UndoCompactionParams struct {
	SessionRef
}

// UndoCompactionResult says what the undo did, and Message says it in words.
type UndoCompactionResult struct {
	Session string `json:"session"`
	agent.CompactionUndo
	Message string `json:"message"`
}

// UndoSentence says what undoing a compaction of session did, in the words of the edge that shows it: what was
// restored, whether an earlier one can be undone, and when the restored conversation is over the budget, that
// the next message compacts it again and how to steer that.
func UndoSentence(u agent.CompactionUndo, session string, w Words) string {
	var b strings.Builder
	if u.Kind == storage.KindCheckpointEdit {
		// Saves of the checkpoint in a row are one step (storage.Store.Apply): say so, or a user who saved
		// twice expects the first save back.
		fmt.Fprintf(&b, "Undid the last checkpoint edit (saves in a row, with no message between them, are one edit): the checkpoint is again as it was before it; the conversation holds %d %s", u.Restored, plural(u.Restored, "message", "messages"))
	} else {
		fmt.Fprintf(&b, "Undid the last %s: the conversation is again as it was before it, %d %s", u.Kind, u.Restored, plural(u.Restored, "message", "messages"))
	}
	if u.Kept > 0 {
		fmt.Fprintf(&b, ", followed by the %d %s added since", u.Kept, plural(u.Kept, "message", "messages"))
	}
	b.WriteString(".")
	compact := strings.ReplaceAll(w.Compact, "SESSION", session)
	if u.More {
		undo := w.UndoCompaction
		if strings.Contains(undo, "%s") {
			undo = fmt.Sprintf(undo, session)
		}
		fmt.Fprintf(&b, " Undo again (%s) to undo the one before.", undo)
	}
	switch {
	case u.OverHardLimit:
		fmt.Fprintf(&b, " It is over the context budget: the next message compacts or trims it before anything is sent. To choose what the checkpoint keeps, compact it now with a focus (%s), or keep more recent turns verbatim (%s).", compact, w.KeepTurns)
	case u.WillCompact:
		fmt.Fprintf(&b, " It is past the compaction threshold: the next message compacts it again. To choose what the checkpoint keeps, compact it now with a focus (%s), or keep more recent turns verbatim (%s).", compact, w.KeepTurns)
	}
	return b.String()
}
