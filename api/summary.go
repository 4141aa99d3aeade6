package api

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// Summary is the sentence a user reads for a compaction event (empty: nothing to say), the same in every
// edge: the editors' notifications, the progress report, the CLI. Event.Summary carries it.
func Summary(e compaction.Event) string {
	switch e.Type {
	case compaction.EventStarted:
		if e.Ahead {
			return fmt.Sprintf("compacting %s (%s), summarized in the background…", spanWords(e.SpanMessages, e.SpanCheckpoint), why(e.Reason, e.Rule))
		}
		return fmt.Sprintf("compacting %s (%s)…", spanWords(e.SpanMessages, e.SpanCheckpoint), why(e.Reason, e.Rule))
	case compaction.EventCompleted:
		// The same figures as the chat's boundary: the messages and their chars, into the checkpoint's chars.
		// The request in the meter's unit: tokens, the tool catalog included (chars leave the catalog out).
		now := fmt.Sprintf("the request is now %s tokens (was %s)", Human(e.AfterTokens), Human(e.BeforeTokens))
		if e.AfterTokens == 0 {
			now = fmt.Sprintf("instructions and conversation are now %s chars (was %s)", Human(e.AfterChars), Human(e.BeforeChars))
		}
		text := fmt.Sprintf("compacted %s, %s → %s chars; %s", spanWords(e.SpanMessages, e.SpanCheckpoint), Human(e.SpanChars), Human(e.CheckpointChars), now)
		if e.Ahead {
			text += "; summarized in the background"
		}
		if f := fidelityWords(e.Fidelity); f != "" {
			text += "; " + f
		}
		for _, p := range e.Plugins {
			text += fmt.Sprintf("; %s: %s", p.Plugin, p.Summary)
		}
		if e.Message != "" {
			text += ". " + e.Message
		}
		return text
	case compaction.EventFailed:
		if e.Cause == compaction.CauseStopped {
			return "compaction " + e.Message
		}
		return "compaction failed: " + firstOf(e.Message, e.Error)
	case compaction.EventSkipped:
		return "compaction skipped: " + strings.TrimPrefix(e.Message, "compaction ")
	case compaction.EventReduced:
		return fmt.Sprintf("%d large %s trimmed to fit the budget", e.Messages, plural(e.Messages, "message", "messages"))
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

// fidelityKinds name the ledger's kinds as a user reads them, in the order they are listed (added: one of
// them, in the count of those added).
var fidelityKinds = []struct{ kind, words, added string }{
	{compaction.KindFiles, "files", "file"}, {compaction.KindConstraints, "your constraints", "constraint"},
	{compaction.KindCommands, "commands", "command"}, {compaction.KindErrors, "error lines", "error line"},
}

// fidelityWords says how much of what the session did the summary kept, kind by kind, and what was added to
// it: "the summary kept files 3/5, your constraints 2/2, commands 1/4 (added from the session: 2 files)".
func fidelityWords(f compaction.Fidelity) string {
	if len(f) == 0 {
		return ""
	}
	var kept, added []string
	say := func(kind, words, one, many string) {
		if c, ok := f[kind]; ok {
			kept = append(kept, fmt.Sprintf("%s %d/%d", words, c.Covered, c.Anchors))
			if c.Added > 0 {
				added = append(added, fmt.Sprintf("%d %s", c.Added, plural(c.Added, one, many)))
			}
		}
	}
	known := map[string]bool{}
	for _, k := range fidelityKinds {
		known[k.kind] = true
		say(k.kind, k.words, k.added, k.added+"s")
	}
	var extra []string
	for kind := range f {
		if !known[kind] {
			extra = append(extra, kind)
		}
	}
	sort.Strings(extra)
	for _, kind := range extra {
		say(kind, kind, kind, kind) // a plugin's kind, as it names it
	}
	text := "the summary kept " + strings.Join(kept, ", ")
	if len(added) > 0 {
		text += " (added from the session: " + strings.Join(added, ", ") + ")"
	}
	return text
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
	case n >= 10_000: // 12k, 220k: whole thousands
		return fmt.Sprintf("%dk", int(math.Round(float64(n)/1000)))
	case n >= 1000: // 2.7k, 3k: a figure that moved by a few hundred shows it
		return strings.Replace(fmt.Sprintf("%.1fk", float64(n)/1000), ".0k", "k", 1)
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

// spanWords names what a compaction replaced: its messages, and the earlier checkpoint they begin with (which
// holds the messages compacted before, so the chat's boundary counts more).
func spanWords(messages int, checkpoint bool) string {
	if checkpoint && messages > 1 {
		return fmt.Sprintf("the earlier checkpoint and %d %s after it", messages-1, plural(messages-1, "message", "messages"))
	}
	return fmt.Sprintf("%d %s", messages, plural(messages, "message", "messages"))
}
