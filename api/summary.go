package api

import (
	"fmt"
	"math"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// Summary is the sentence a user reads for a compaction event (empty: nothing to say), the same in every
// edge: the editors' notifications, the progress report, the CLI. Event.Summary carries it.
func Summary(e compaction.Event) string {
	switch e.Type {
	case compaction.EventStarted:
		if e.Ahead {
			return fmt.Sprintf("compacting %d messages (%s), summarized in the background…", e.SpanMessages, why(e.Reason, e.Rule))
		}
		return fmt.Sprintf("compacting %d messages (%s)…", e.SpanMessages, why(e.Reason, e.Rule))
	case compaction.EventCompleted:
		// The same figures as the chat's boundary: the messages and their chars, into the checkpoint's chars.
		text := fmt.Sprintf("compacted %d messages, %s → %s chars; the request is now %s chars (was %s)", e.SpanMessages, Human(e.SpanChars),
			Human(e.CheckpointChars), Human(e.AfterChars), Human(e.BeforeChars))
		if e.Ahead {
			text += "; summarized in the background"
		}
		for _, p := range e.Plugins {
			text += fmt.Sprintf("; %s: %s", p.Plugin, p.Summary)
		}
		if e.Message != "" {
			text += ". " + e.Message
		}
		return text
	case compaction.EventFailed:
		return "compaction failed: " + firstOf(e.Message, e.Error)
	case compaction.EventSkipped:
		return "compaction skipped: " + e.Message
	case compaction.EventReduced:
		return fmt.Sprintf("%d large message(s) trimmed to fit the budget", e.Messages)
	case compaction.EventHookFailed:
		return firstOf(e.Message, fmt.Sprintf("the %s plugin failed", e.Plugin))
	case compaction.EventAheadStarted:
		return "compacting in background: the next compaction's summary is being written"
	case compaction.EventAheadReady:
		return fmt.Sprintf("compacting in background: the summary of %d messages is ready for the next compaction", e.SpanMessages)
	case compaction.EventAheadDiscarded:
		return "the background summary was thrown away: " + e.Message
	}
	return ""
}

// why says in words what started a compaction.
func why(reason compaction.Reason, rule compaction.Rule) string {
	switch {
	case reason == compaction.ReasonManual:
		return "asked for"
	case reason == compaction.ReasonBudget:
		return "last resort: the conversation is over the limit"
	case rule == compaction.RuleWindow:
		return "automatic: the request passed the window's compaction point"
	case rule == compaction.RuleReserve:
		return "automatic: the window has no room left for the reply"
	case rule == compaction.RuleChars:
		return "automatic: the conversation passed limits.maxContextChars's compaction point"
	}
	return string(reason)
}

// Human writes a count the way the meter does: 950, 31k, 1.2M.
func Human(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dk", int(math.Round(float64(n)/1000)))
	}
	return fmt.Sprint(n)
}

func firstOf(texts ...string) string {
	for _, t := range texts {
		if strings.TrimSpace(t) != "" {
			return t
		}
	}
	return ""
}
