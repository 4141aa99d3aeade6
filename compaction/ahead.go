package compaction

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Ahead is a summary written before it was needed (background compaction): the span it covers, by the IDs of
// its messages, and the summarizer's replies for it. A compaction whose view still begins with that span
// replaces exactly it — what was appended since joins the kept tail — and takes the replies from here instead
// of asking the summarizer again (a request that differs, a plugin's new instructions say, is asked again).
type Ahead struct {
	// SpanIDs are the IDs of the span's messages, in order.
	SpanIDs []string
	mu      sync.Mutex
	replies map[[32]byte]SummaryReply
}

// SummarizeAhead writes the summary the next compaction of in.View would need, now: the span Compact would
// choose with opts, summarized as Compact would summarize it (the plugins' BeforeCompact hooks included), its
// replies kept for Compact (Options.Ahead). It emits nothing; a view with uncertain calls or no span to
// summarize gives an error, as Compact would.
func SummarizeAhead(ctx context.Context, in Input, opts Options, s Summarizer) (*Ahead, error) {
	if calls := transcript.UnansweredCalls(in.View); len(calls) > 0 {
		err := &UncertainError{}
		for _, c := range calls {
			err.CallIDs = append(err.CallIDs, c.ID)
		}
		return nil, err
	}
	span, ok := chooseSpan(in.View, opts)
	if !ok {
		return nil, ErrNothingToSummarize
	}
	a := &Ahead{replies: map[[32]byte]SummaryReply{}}
	for _, m := range in.View[:span.End] {
		a.SpanIDs = append(a.SpanIDs, m.ID)
	}
	ext := beforeHooks(ctx, opts, nil)
	if _, _, err := summarize(ctx, in.View[:span.End], opts, recording{s, a}, ext); err != nil {
		return nil, err
	}
	return a, nil
}

// spanOf is the span a compaction of view takes from a: its end, when view still begins with a's messages
// (ok false otherwise).
func (a *Ahead) spanOf(view []transcript.Message) (Span, bool) {
	if a == nil || len(a.SpanIDs) == 0 || len(a.SpanIDs) >= len(view) {
		return Span{}, false
	}
	for i, id := range a.SpanIDs {
		if view[i].ID != id {
			return Span{}, false
		}
	}
	return Span{End: len(a.SpanIDs)}, true
}

// requestKey identifies a summarizer request by everything that shapes its reply.
func requestKey(req SummaryRequest) [32]byte {
	ids := make([]string, 0, len(req.Sent))
	for _, m := range req.Sent {
		ids = append(ids, m.ID)
	}
	raw, _ := json.Marshal(struct {
		System, Prompt, Focus, SentSystem string
		Schema                            json.RawMessage
		MaxOutputTokens                   int
		Fields, ExtraFields, Sent         []string
		Span                              int
	}{req.System, req.Prompt, req.Focus, req.SentSystem, req.Schema, req.MaxOutputTokens, req.Fields, req.ExtraFields, ids, len(req.Span)})
	return sha256.Sum256(raw)
}

// recording is a Summarizer that keeps each reply in an Ahead.
type recording struct {
	s Summarizer
	a *Ahead
}

// Summarize implements Summarizer.
func (r recording) Summarize(ctx context.Context, req SummaryRequest) (SummaryReply, error) {
	rep, err := r.s.Summarize(ctx, req)
	if err == nil {
		r.a.mu.Lock()
		r.a.replies[requestKey(req)] = rep
		r.a.mu.Unlock()
	}
	return rep, err
}

// replaying is a Summarizer that answers from an Ahead the requests it recorded, and asks s for others.
type replaying struct {
	s Summarizer
	a *Ahead
}

// Summarize implements Summarizer.
func (r replaying) Summarize(ctx context.Context, req SummaryRequest) (SummaryReply, error) {
	r.a.mu.Lock()
	rep, ok := r.a.replies[requestKey(req)]
	r.a.mu.Unlock()
	if ok {
		return rep, nil
	}
	return r.s.Summarize(ctx, req)
}
