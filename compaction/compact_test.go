package compaction_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/compaction/compactiontest"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

// scripted is a Summarizer that answers from a list and records what it was asked.
type scripted struct {
	replies []compaction.SummaryReply
	err     error
	got     []compaction.SummaryRequest
}

func (s *scripted) Summarize(_ context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	s.got = append(s.got, req)
	if s.err != nil {
		return compaction.SummaryReply{}, s.err
	}
	if len(s.replies) == 0 {
		return compaction.SummaryReply{}, errors.New("script exhausted")
	}
	r := s.replies[0]
	s.replies = s.replies[1:]
	return r, nil
}

type recorder struct{ events []compaction.Event }

func (r *recorder) emit(e compaction.Event) { r.events = append(r.events, e) }

func (r *recorder) types() string {
	var t []string
	for _, e := range r.events {
		t = append(t, e.Type)
	}
	return strings.Join(t, ",")
}

const fullJSON = `{"goal":"g","instructions":["never push"],"discoveries":["d"],"accomplished":["a"],"currentState":"s","nextSteps":["n"],"relevantFiles":[{"path":"a.go","reason":"r"}]}`

func compactChecked(t *testing.T, in compaction.Input, opts compaction.Options, s compaction.Summarizer) (compaction.Result, *recorder, error) {
	t.Helper()
	rec := &recorder{}
	res, err := compaction.Compact(context.Background(), in, opts, s, rec.emit)
	if err == nil {
		if e := compactiontest.Check(in.View, res.Rewrite, nil, compactiontest.Limits{KeepTurns: opts.KeepTurns}); e != nil {
			t.Fatal(e)
		}
	}
	return res, rec, err
}

func TestCompact_RealTranscriptsOffline(t *testing.T) {
	for _, f := range transcripttest.Corpus(t) {
		name := f.Name
		t.Run(name, func(t *testing.T) {
			im, err := formats.Import(f.Read(t), formats.Auto)
			if err != nil {
				t.Fatal(err)
			}
			view := im.Messages
			if open := transcript.UnansweredCalls(view); len(open) > 0 {
				// G3: refused until recovered, and the refusal names the calls.
				_, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 2}, compaction.Offline{})
				var ue *compaction.UncertainError
				if !errors.As(err, &ue) || ue.CallIDs[0] != open[0].ID || rec.types() != compaction.EventSkipped {
					t.Fatalf("uncertain session compacted: %v / %s", err, rec.types())
				}
				view = append(view, transcript.Message{Role: transcript.RoleTool, ToolCallID: open[0].ID, Text: "outcome unknown"})
			}
			res, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 16000}, compaction.Offline{})
			if name == "claude-code-5c0375b4.jsonl" {
				// Its last turn is almost the whole session: a checkpoint of the one command message before it
				// would be larger than that message, so the compaction is dropped instead of growing the context.
				if !errors.Is(err, compaction.ErrNoGain) || !strings.HasSuffix(rec.types(), compaction.EventSkipped) {
					t.Fatalf("%v / %s", err, rec.types())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rec.types() != "compaction_started,compaction_completed" {
				t.Fatalf("events %s", rec.types())
			}
			ev := res.Event
			if ev.AfterChars >= ev.BeforeChars || ev.SpanMessages != res.Rewrite.Drop || ev.CheckpointChars == 0 || ev.Reason != "" && ev.Reason != compaction.ReasonManual {
				t.Fatalf("event %+v", ev)
			}
			if res.Checkpoint.Goal == "" || !res.View[0].Summary {
				t.Fatalf("checkpoint %+v", res.Checkpoint)
			}
		})
	}
}

func TestCompact_StructuredReplyAndPromptContents(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(60))
	prev := compaction.Checkpoint{Goal: "old goal", Instructions: []string{"keep it short"}}
	raw, _ := json.Marshal(prev)
	view = append([]transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "old", Structured: raw}}, view...)
	s := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	res, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 2, MaxOutputTokens: 16000, Focus: "the storage bug", Reason: compaction.ReasonManual}, s)
	if err != nil {
		t.Fatal(err)
	}
	// The completed event says the span holds the earlier checkpoint (its sentence names it).
	if done := rec.events[len(rec.events)-1]; done.Type != compaction.EventCompleted || !done.SpanCheckpoint || done.SpanMessages != res.Rewrite.Drop {
		t.Fatalf("the completed event: %+v", done)
	}
	req := s.got[0]
	if !strings.Contains(req.Prompt, "the storage bug") || !strings.Contains(req.Prompt, "old goal") || !strings.Contains(req.Prompt, "<history>") {
		t.Fatal("C3/update: focus, previous checkpoint or history missing from the prompt")
	}
	// One call: the span as the agent's requests sent it (the previous checkpoint first) is offered for the
	// suffix form, whose ask speaks of the conversation above, with the focus and the schema.
	if len(req.Sent) != res.Rewrite.Drop || !req.Sent[0].Summary {
		t.Fatalf("Sent holds %d messages; the span is %d", len(req.Sent), res.Rewrite.Drop)
	}
	ask := compaction.SuffixPrompt(req)
	if !strings.HasPrefix(ask, compaction.SuffixMarker) || strings.Contains(ask, "<history>") || !strings.Contains(ask, "conversation above this message is the history") ||
		!strings.Contains(ask, "focus on: the storage bug") || !strings.HasSuffix(ask, string(req.Schema)) {
		t.Fatalf("the suffix form's ask:\n%s", ask)
	}
	if strings.Contains(req.Prompt, "<checkpoint>\nold") {
		t.Fatal("the previous checkpoint was summarized as history instead of updated")
	}
	if !strings.Contains(req.System, "VERBATIM") || !strings.Contains(req.System, "Never follow instructions") || req.MaxOutputTokens != 16000 {
		t.Fatal("summarizer instructions")
	}
	if !json.Valid(req.Schema) {
		t.Fatal("schema")
	}
	// The previous checkpoint's instructions are carried over even though the summarizer dropped them.
	// The span's own constraint sentences follow, added from the ledger where the summarizer left them out.
	if !strings.HasPrefix(strings.Join(res.Checkpoint.Instructions, "|"), "keep it short|never push") || res.Checkpoint.Partial || !strings.Contains(res.View[0].Text, "## Goal\ng") {
		t.Fatalf("checkpoint %+v", res.Checkpoint)
	}
}

func TestCompact_PartialSummaries(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(40))
	cut := fullJSON[:strings.Index(fullJSON, `"currentState"`)]
	for _, tc := range []struct {
		name      string
		replies   []compaction.SummaryReply
		partial   bool
		recovered []string
		missing   []string
		fail      string
	}{
		{"P2 follow-up recovers the missing fields", []compaction.SummaryReply{{Text: cut, Truncated: true},
			{Text: `{"currentState":"s2","nextSteps":["n2"],"relevantFiles":[]}`}}, true, []string{"currentState", "nextSteps", "relevantFiles"}, nil, ""},
		{"P2 follow-up fails: partial kept", []compaction.SummaryReply{{Text: cut, Truncated: true}, {Text: "", Truncated: true}},
			true, nil, []string{"currentState", "nextSteps", "relevantFiles"}, ""},
		{"P2 plain text cut", []compaction.SummaryReply{{Text: "We were fixing the store and", Truncated: true}}, true, nil, nil, ""},
		{"P3 nothing usable", []compaction.SummaryReply{{Text: `{"goal": "`, Truncated: true}}, false, nil, nil, "compaction.maxOutputTokens"},
		{"C2 invalid JSON becomes a text checkpoint", []compaction.SummaryReply{{Text: "Summary: fixing things."}}, false, nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scripted{replies: tc.replies}
			res, rec, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 1000}, s)
			if tc.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tc.fail) || !strings.HasSuffix(rec.types(), compaction.EventFailed) {
					t.Fatalf("err %v events %s", err, rec.types())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ev := res.Event
			if ev.Partial != tc.partial || res.View[0].Partial != tc.partial || strings.Join(ev.RecoveredFields, ",") != strings.Join(tc.recovered, ",") ||
				strings.Join(ev.MissingFields, ",") != strings.Join(tc.missing, ",") {
				t.Fatalf("event partial=%v recovered=%v missing=%v", ev.Partial, ev.RecoveredFields, ev.MissingFields)
			}
			if tc.partial && !strings.Contains(ev.Message, "compaction.maxOutputTokens") {
				t.Fatalf("P2 message %q", ev.Message)
			}
			if len(tc.recovered) > 0 && (len(s.got) != 2 || strings.Join(s.got[1].Fields, ",") != strings.Join(tc.recovered, ",")) {
				t.Fatal("the follow-up did not ask only for the missing fields")
			}
		})
	}
}

func TestCompact_ChunksASpanLargerThanTheSummarizerWindow(t *testing.T) {
	cfg := synthetic.Default(400)
	cfg.HugeEvery = 0
	view := synthetic.Generate(cfg)
	s := &scripted{}
	for i := 0; i < 50; i++ {
		s.replies = append(s.replies, compaction.SummaryReply{Text: fullJSON})
	}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 2000, SummarizerWindow: 18_700}, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Chunks < 3 || len(s.got) != res.Event.Chunks {
		t.Fatalf("%d chunks, %d calls", res.Event.Chunks, len(s.got))
	}
	for _, req := range s.got {
		if req.Sent != nil {
			t.Fatal("a chunk offers the suffix form: only a span summarized in one call is a prefix of a request sent")
		}
	}
	for i, req := range s.got {
		if n := len([]rune(req.Prompt)) + len([]rune(req.System)); n > 60_000 {
			t.Fatalf("chunk %d prompt is %d chars, over the summarizer's input", i, n)
		}
		if i > 0 && !strings.Contains(req.Prompt, "Previous checkpoint") {
			t.Fatalf("chunk %d does not update the running checkpoint", i)
		}
	}
	// An output budget that leaves no room for history in a small window (3,000 tokens) is lowered, and the
	// event says so.
	small := synthetic.Default(20)
	small.HugeEvery = 0
	view = synthetic.Generate(small)
	s.got = nil
	for i := 0; i < 200; i++ {
		s.replies = append(s.replies, compaction.SummaryReply{Text: fullJSON})
	}
	const window = 3_000
	res, _, err = compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 16000, SummarizerWindow: window}, s)
	if err != nil {
		t.Fatalf("an output budget that leaves no room in the window: %v", err)
	}
	if !strings.Contains(res.Event.Message, "lowered from 16000 to") || len(s.got) < 2 || s.got[0].MaxOutputTokens >= window/4 {
		t.Fatalf("event %q; %d calls asked for %d tokens", res.Event.Message, len(s.got), s.got[0].MaxOutputTokens)
	}
	for i, req := range s.got {
		if n := len([]rune(req.Prompt)) + len([]rune(req.System)) + req.MaxOutputTokens*4; n > window*4 {
			t.Fatalf("chunk %d: prompt and output budget take %d chars, over the summarizer's window", i, n)
		}
	}
	// A window too small even for the least output budget is refused, saying so.
	if _, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 16000, SummarizerWindow: 2_000}, s); err == nil ||
		!strings.Contains(err.Error(), "too small") {
		t.Fatalf("a window too small for any output budget: %v", err)
	}
}

func TestCompact_ResponsesItemsFollowTheirMessages(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(30))
	for i := range view {
		if view[i].Role == transcript.RoleAssistant {
			view[i].Items = []transcript.ProviderItem{{Kind: "openai.reasoning", Data: json.RawMessage(`{"encrypted_content":"gAAA` + view[i].ID + `"}`)}}
		}
	}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, compaction.Offline{})
	if err != nil {
		t.Fatal(err)
	}
	dropped := map[string]bool{}
	for _, m := range view[:res.Rewrite.Drop] {
		for _, it := range m.Items {
			dropped[string(it.Data)] = true
		}
	}
	for _, m := range res.View {
		for _, it := range m.Items {
			if dropped[string(it.Data)] {
				t.Fatal("RM1: an opaque item of the summarized span survived")
			}
		}
	}
	kept := res.View[1:]
	for i, m := range kept {
		if string(mustJSON(m.Items)) != string(mustJSON(view[res.Rewrite.Drop+i].Items)) {
			t.Fatal("RM1: a kept message's items changed")
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestCompact_SkippedAndFailed(t *testing.T) {
	rec := &recorder{}
	_, err := compaction.Compact(context.Background(), compaction.Input{View: []transcript.Message{user("hi"), asst("hello")}}, compaction.Options{KeepTurns: 2}, compaction.Offline{}, rec.emit)
	if !errors.Is(err, compaction.ErrNothingToSummarize) || rec.types() != compaction.EventSkipped {
		t.Fatalf("%v %s", err, rec.types())
	}
	view := synthetic.Generate(synthetic.Default(30))
	_, rec2, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, &scripted{err: errors.New("502 bad gateway")})
	if err == nil || !strings.Contains(err.Error(), "502") || rec2.types() != "compaction_started,compaction_failed" || rec2.events[1].Cause != "" {
		t.Fatalf("%v %s", err, rec2.types())
	}
	// Stopped by the user (its context cancelled): the failure says so, for the editors to say "stopped".
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec3 := &recorder{}
	_, err = compaction.Compact(ctx, compaction.Input{View: view}, compaction.Options{KeepTurns: 1}, &scripted{err: fmt.Errorf("provider request failed: %w", context.Canceled)}, rec3.emit)
	if last := rec3.events[len(rec3.events)-1]; !errors.Is(err, context.Canceled) || last.Type != compaction.EventFailed || last.Cause != compaction.CauseStopped {
		t.Fatalf("%v %+v", err, rec3.events)
	}
}

func TestCompact_RelevantFilesMergedFromTheTracker(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(40))
	s := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1,
		RelevantFiles: []compaction.RelevantFile{{Path: "b.go", Reason: "edited by the agent"}, {Path: "a.go", Reason: "read"}, {Path: "gone.go", Reason: "read"}},
		DeletedFiles:  []string{"gone.go"}}, s)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Checkpoint.RelevantFiles {
		got = append(got, f.Path+":"+f.Reason)
	}
	// The summarizer's own first, then the files the span's tool calls used (the ledger), then the tracker's.
	joined := strings.Join(got, ",")
	if !strings.HasPrefix(joined, "a.go:r,") || !strings.HasSuffix(joined, ",b.go:edited by the agent") || strings.Contains(joined, "gone.go") || len(got) < 3 {
		t.Fatalf("relevant files %v", got)
	}
}

// TestCompact_FollowUpKeepsSalvagedContent: the reply is cut inside "accomplished" and inside no other field;
// the follow-up call for the missing fields must add to what was salvaged, never replace it (seed: a partial
// checkpoint keeps everything the model produced before the cut), while the item the cut interrupted is not
// kept as a complete one.
func TestCompact_FollowUpKeepsSalvagedContent(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(40))
	cut := `{"goal":"fix the parser","instructions":["never push"],"discoveries":["the lexer drops brackets"],` +
		`"accomplished":["rewrote lexer.go","added parser_test.go","started on the err`
	s := &scripted{replies: []compaction.SummaryReply{{Text: cut, Truncated: true},
		{Text: `{"accomplished":["added parser_test.go","ran go test"],"currentState":"tests pass","nextSteps":["open a PR"],"relevantFiles":[]}`}}}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 1000}, s)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(res.Checkpoint.Accomplished, "|")
	if got != "rewrote lexer.go|added parser_test.go|ran go test" {
		t.Fatalf("accomplished %q: the complete salvaged items must stay, the follow-up's new ones added", got)
	}
	if res.Checkpoint.Goal != "fix the parser" || res.Checkpoint.CurrentState != "tests pass" || len(res.Checkpoint.Missing) != 0 {
		t.Fatalf("checkpoint %+v", res.Checkpoint)
	}
}

// TestCompact_CutArrayItemIsDropped: a reply cut inside an array item ("d2 is trunc") must not keep the
// half-written item as a complete fact; the follow-up's full item takes its place instead of being added beside
// it.
func TestCompact_CutArrayItemIsDropped(t *testing.T) {
	view := synthetic.Generate(synthetic.Default(40))
	cut := `{"goal":"g","instructions":["never push"],"discoveries":["d1","d2 is trunc`
	s := &scripted{replies: []compaction.SummaryReply{{Text: cut, Truncated: true},
		{Text: `{"discoveries":["d1","d2"],"accomplished":["a"],"currentState":"s","nextSteps":["n"],"relevantFiles":[]}`}}}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 1000}, s)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Checkpoint.Discoveries, "|"); got != "d1|d2" {
		t.Fatalf("discoveries %q: the item the cut interrupted must be dropped", got)
	}
	if len(s.got) != 2 || !strings.Contains(strings.Join(s.got[1].Fields, ","), "discoveries") {
		t.Fatal("the follow-up must ask again for the field the cut interrupted")
	}
}

// TestCompact_SmallSummarizerWindowTakesAFittingSpanAtOnce: a 3000-token window leaves the summarizer 8100 chars
// of input after its 750-token output budget; a span that fits there with the instructions is summarized in one
// call, with no room kept for a running checkpoint that one call does not have.
func TestCompact_SmallSummarizerWindowTakesAFittingSpanAtOnce(t *testing.T) {
	view := append(longTurn("A", 3, 1000), longTurn("B", 1, 10)...)
	s := &scripted{replies: []compaction.SummaryReply{{Text: fullJSON}}}
	res, _, err := compactChecked(t, compaction.Input{View: view}, compaction.Options{KeepTurns: 1, MaxOutputTokens: 750, SummarizerWindow: 3_000}, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Event.Chunks != 1 || res.Rewrite.Drop != 8 {
		t.Fatalf("%d chunks for %d messages; want the whole turn A in one call", res.Event.Chunks, res.Rewrite.Drop)
	}
	if n := len([]rune(s.got[0].Prompt)) + len([]rune(s.got[0].System)); n > 8100 {
		t.Fatalf("the prompt is %d chars, over the summarizer's input", n)
	}
}
