package agent

import (
	"sync"

	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// heldEvents passes a compaction's events on as they happen, except the ones that say a rewrite is done
// (compaction_completed, context_reduced): those wait until the rewrite is saved, so that an editor that reads
// the checkpoint when told "compacted" finds it, and a rewrite the store refused is never announced as done.
type heldEvents struct {
	emit compaction.Emitter
	mu   sync.Mutex
	held []compaction.Event
}

// holdDone wraps emit (nil: the events go nowhere).
func holdDone(emit compaction.Emitter) *heldEvents { return &heldEvents{emit: emit} }

// Emitter is what the compaction emits to.
func (h *heldEvents) Emitter() compaction.Emitter {
	return func(ev compaction.Event) {
		if ev.Type == compaction.EventCompleted || ev.Type == compaction.EventReduced {
			h.mu.Lock()
			h.held = append(h.held, ev)
			h.mu.Unlock()
			return
		}
		h.send(ev)
	}
}

// release sends the held events once the rewrite is saved; when saving failed (saveErr), it says instead that
// each of them failed, with the reason.
func (h *heldEvents) release(saveErr error) {
	h.mu.Lock()
	held := h.held
	h.held = nil
	h.mu.Unlock()
	for _, ev := range held {
		if saveErr != nil {
			ev = compaction.Event{Type: compaction.EventFailed, Reason: ev.Reason, Rule: ev.Rule, BeforeChars: ev.BeforeChars,
				DurationMs: ev.DurationMs, Message: "the compacted transcript could not be saved; the session is as it was",
				Error: saveErr.Error()}
		}
		h.send(ev)
	}
}

func (h *heldEvents) send(ev compaction.Event) {
	if h.emit != nil {
		h.emit(ev)
	}
}
