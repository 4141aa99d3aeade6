package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// hook is a plugin written in Go for the tests: its hooks return what it is given and record what they saw.
type hook struct {
	name      string
	before    compaction.BeforeResult
	beforeErr error
	after     compaction.AfterResult
	afterErr  error
	saw       *compaction.HookInput
}

func (h *hook) Name() string { return h.name }

func (h *hook) BeforeCompact(context.Context, compaction.HookInput) (compaction.BeforeResult, error) {
	return h.before, h.beforeErr
}

func (h *hook) AfterCompact(_ context.Context, in compaction.HookInput) (compaction.AfterResult, error) {
	h.saw = &in
	return h.after, h.afterErr
}

// TestCompact_PluginsExtendTheSameSummarizerCall: both hooks in one compaction. The single summarizer call
// carries each plugin's instructions and output fields in its schema; each AfterCompact gets the checkpoint
// and only its own fields; injected context lands after the checkpoint; the reports reach the event.
func TestCompact_PluginsExtendTheSameSummarizerCall(t *testing.T) {
	todo := &hook{name: "todo", before: compaction.BeforeResult{Instructions: "list open questions",
		OutputFields: map[string]json.RawMessage{"openQuestions": json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}},
		after: compaction.AfterResult{InjectContext: "Open: does the lexer need a rewrite?", Report: &compaction.PluginReport{Summary: "1 open question"}}}
	tags := &hook{name: "tags", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"tags": json.RawMessage(`{"type":"array","items":{"type":"string"}}`)}},
		after: compaction.AfterResult{Report: &compaction.PluginReport{Summary: "tagged"}}}
	reply := strings.TrimSuffix(fullJSON, "}") + `,"openQuestions":["does the lexer need a rewrite?"],"tags":["parser"]}`
	s := &scripted{replies: []compaction.SummaryReply{{Text: reply}}}
	view := synthetic.Generate(synthetic.Default(60))
	res, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 4000,
		Plugins: []compaction.Plugin{todo, tags}, Session: "s1", Workspace: "/ws"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.got) != 1 {
		t.Fatalf("%d summarizer calls; the plugins must extend the one call", len(s.got))
	}
	var schema struct {
		Properties map[string]any
		Required   []string
	}
	_ = json.Unmarshal(s.got[0].Schema, &schema)
	if schema.Properties["openQuestions"] == nil || schema.Properties["tags"] == nil || schema.Properties["goal"] == nil ||
		!strings.Contains(strings.Join(schema.Required, ","), "openQuestions") || !strings.Contains(s.got[0].System, "list open questions") {
		t.Fatalf("the summarizer request lacks the plugins' fields or instructions: %s", s.got[0].Schema)
	}
	if todo.saw == nil || len(todo.saw.Fields) != 1 || string(todo.saw.Fields["openQuestions"]) != `["does the lexer need a rewrite?"]` ||
		todo.saw.Checkpoint == nil || todo.saw.Checkpoint.Goal != "g" || todo.saw.Session != "s1" || todo.saw.Workspace != "/ws" {
		t.Fatalf("todo's AfterCompact saw %+v", todo.saw)
	}
	if _, leaked := tags.saw.Fields["openQuestions"]; leaked || string(tags.saw.Fields["tags"]) != `["parser"]` {
		t.Fatalf("tags saw another plugin's field: %v", tags.saw.Fields)
	}
	text := res.View[0].Text
	if i, j := strings.Index(text, "## Goal"), strings.Index(text, "Open: does the lexer need a rewrite?"); i < 0 || j < i {
		t.Fatalf("the injected context is not after the checkpoint: %q", text)
	}
	ev := rec.events[len(rec.events)-1]
	if ev.Type != compaction.EventCompleted || len(ev.Plugins) != 2 || ev.Plugins[0].Plugin != "todo" || ev.Plugins[0].Summary != "1 open question" {
		t.Fatalf("event %+v", ev)
	}
	// The injected context is kept apart from the checkpoint's fields (an edit of the checkpoint keeps it): the
	// next compaction updates the fields without it, and the plugins inject again.
	stored, _ := compaction.ParseStructured(res.View[0].Structured)
	if !strings.Contains(stored.Context, "lexer need a rewrite") || strings.Contains(string(compaction.Editable(stored)), "lexer need a rewrite") {
		t.Fatalf("the injected context in the stored checkpoint: %+v", stored)
	}
}

// TestCompact_PluginFailuresNeverStopACompaction covers PH2 in the core: a failing hook, a field that clashes
// (with the checkpoint's or another plugin's), a schema that does not compile and a value the field's schema
// refuses each give plugin_hook_failed naming the plugin and the hook, and the compaction completes.
func TestCompact_PluginFailuresNeverStopACompaction(t *testing.T) {
	arr := json.RawMessage(`{"type":"array","items":{"type":"string"}}`)
	for _, tc := range []struct {
		name    string
		plugins []compaction.Plugin
		reply   string
		failed  string // plugin:hook
		reason  string
	}{
		{"before fails", []compaction.Plugin{&hook{name: "p", beforeErr: errors.New("boom")}}, fullJSON, "p:beforeCompact", "boom"},
		{"after fails", []compaction.Plugin{&hook{name: "p", afterErr: errors.New("disk on fire")}}, fullJSON, "p:afterCompact", "disk on fire"},
		{"clash with the checkpoint", []compaction.Plugin{&hook{name: "p", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"goal": arr}}}}, fullJSON, "p:beforeCompact", "clashes"},
		{"clash between plugins", []compaction.Plugin{
			&hook{name: "a", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"x": arr}}},
			&hook{name: "b", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"x": arr}}}}, fullJSON, "b:beforeCompact", "clashes with the a plugin"},
		{"schema does not compile", []compaction.Plugin{&hook{name: "p", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"x": json.RawMessage(`{"type":"nonsense"}`)}}}}, fullJSON, "p:beforeCompact", "invalid JSON Schema"},
		{"value refused by the schema", []compaction.Plugin{&hook{name: "p", before: compaction.BeforeResult{OutputFields: map[string]json.RawMessage{"x": arr}}}},
			strings.TrimSuffix(fullJSON, "}") + `,"x":"not an array"}`, "p:afterCompact", "does not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{replies: []compaction.SummaryReply{{Text: tc.reply}}}
			view := synthetic.Generate(synthetic.Default(40))
			_, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 4000, Plugins: tc.plugins, Reason: compaction.ReasonManual}, s)
			if err != nil {
				t.Fatalf("a plugin failure stopped the compaction: %v", err)
			}
			var failed []string
			for _, e := range rec.events {
				if e.Type == compaction.EventHookFailed {
					failed = append(failed, e.Plugin+":"+e.Hook)
					if !strings.Contains(e.Cause, tc.reason) || !strings.Contains(e.Message, e.Cause) || e.Reason != compaction.ReasonManual {
						t.Errorf("event %+v: its cause does not say %q, or its reason is not the compaction's", e, tc.reason)
					}
				}
			}
			if strings.Join(failed, ",") != tc.failed || !strings.HasSuffix(rec.types(), compaction.EventCompleted) {
				t.Fatalf("failed hooks %v (want %s), events %s", failed, tc.failed, rec.types())
			}
		})
	}
}

// TestCompact_PluginContextThatGrowsItIsNoGain: a compaction whose plugins' context would leave the request
// larger than before is dropped as one that would not shrink it (the view is left as it was).
func TestCompact_PluginContextThatGrowsItIsNoGain(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(60))
	span := transcript.TotalChars(view)
	flood := &hook{name: "flood", after: compaction.AfterResult{InjectContext: strings.Repeat("remember this. ", span/10)}}
	s := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	rec := &recorder{}
	_, err := compaction.Compact(context.Background(), compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 4000,
		Plugins: []compaction.Plugin{flood}, Reason: compaction.ReasonManual}, s, rec.emit)
	if !errors.Is(err, compaction.ErrNoGain) || rec.events[len(rec.events)-1].Type != compaction.EventSkipped {
		t.Fatalf("%v; events %+v", err, rec.events)
	}
}
