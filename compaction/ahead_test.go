package compaction_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"
)

// TestAhead: a summary written ahead is used by the automatic compaction of a view that still begins with its
// span — exactly that span is replaced, the turns appended since join the kept tail, and the summarizer is not
// asked again — and ignored by one whose view changed (a reduced copy, another compaction) or by a manual one.
func TestAhead(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(60))
	opts := compaction.Options{KeepTurns: 2, MaxOutputTokens: 16000, Reason: compaction.ReasonAuto}
	early := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	ahead, err := compaction.SummarizeAhead(context.Background(), compaction.Input{View: view}, opts, early)
	if err != nil || len(early.got) != 1 {
		t.Fatalf("ahead: %v, %d calls", err, len(early.got))
	}
	// Two more turns arrive before the trigger.
	grown := append([]transcript.Message(nil), view...)
	for i := 0; i < 2; i++ {
		grown = append(grown, transcript.Message{ID: fmt.Sprint("late-u", i), Role: transcript.RoleUser, Text: "and then?"},
			transcript.Message{ID: fmt.Sprint("late-a", i), Role: transcript.RoleAssistant, Text: "then this."})
	}
	opts.Ahead = ahead
	now := &scripted{}
	res, rec, err := compactChecked(t, compaction.Input{View: grown}, opts, now)
	if err != nil || len(now.got) != 0 || res.Rewrite.Drop != len(ahead.SpanIDs) || !res.Event.Ahead || !rec.events[0].Ahead {
		t.Fatalf("with the summary ahead: %v, %d calls, dropped %d of %d, ahead %v", err, len(now.got), res.Rewrite.Drop, len(ahead.SpanIDs), res.Event.Ahead)
	}

	// The view no longer begins with the span: asked again, at the usual cut.
	changed := append([]transcript.Message(nil), grown...)
	changed[3].ID = "reduced-copy"
	again := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	res, _, err = compactChecked(t, compaction.Input{View: changed}, opts, again)
	if err != nil || len(again.got) != 1 || res.Event.Ahead {
		t.Fatalf("with a changed view: %v, %d calls, ahead %v", err, len(again.got), res.Event.Ahead)
	}
	// A manual compaction never takes it.
	opts.Reason = compaction.ReasonManual
	manual := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	if res, _, err = compactChecked(t, compaction.Input{View: grown}, opts, manual); err != nil || len(manual.got) != 1 || res.Event.Ahead {
		t.Fatalf("manual: %v, %d calls, ahead %v", err, len(manual.got), res.Event.Ahead)
	}
	// Uncertain calls: nothing is written ahead.
	open := append(append([]transcript.Message(nil), view...), transcript.Message{ID: "x", Role: transcript.RoleAssistant,
		ToolCalls: []transcript.ToolCall{{ID: "call_open", Name: "run_command", Arguments: "{}"}}})
	if _, err := compaction.SummarizeAhead(context.Background(), compaction.Input{View: open}, opts, early); err == nil {
		t.Fatal("a summary ahead of a view with an uncertain call")
	}
}
