package agent

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// cacheAwareSummarizer writes checkpoints in the suffix form where it can (provider.SuffixSummary: the agent's
// own request, which the provider's prompt cache already holds, with the checkpoint asked for at its end), and
// with the standalone summarizer request otherwise: a span summarized in several calls, a follow-up for
// missing fields, a suffix request that would not fit the window, or one that fails (a tool call included).
// What a compaction replaces and keeps does not depend on the form.
type cacheAwareSummarizer struct {
	standalone compaction.Summarizer
	chat       provider.Chat
	// tools are the agent's tool specs as its requests send them; window the tokens (chars/4) one call of a
	// session may fill.
	tools  func() []provider.ToolSpec
	window func(session string) int
	log    *zap.Logger
}

// Summarize implements compaction.Summarizer.
func (s cacheAwareSummarizer) Summarize(ctx context.Context, req compaction.SummaryRequest) (compaction.SummaryReply, error) {
	if req.Sent == nil || len(req.Fields) > 0 {
		return s.standalone.Summarize(ctx, req)
	}
	tools := s.tools()
	out, ok := s.outputBudget(req, tools)
	if !ok {
		return s.standalone.Summarize(ctx, req)
	}
	req.MaxOutputTokens = out
	rep, err := provider.SuffixSummary(ctx, s.chat, req, tools)
	if err != nil {
		if ctx.Err() != nil {
			return compaction.SummaryReply{}, err
		}
		s.log.Info("the checkpoint in the suffix form failed; asking with the standalone request", zap.Error(err))
		return s.standalone.Summarize(ctx, req)
	}
	return rep, nil
}

// minSuffixOutput is the least output budget the suffix form lowers req's to, in tokens (a checkpoint of about
// 16,000 chars); below it the standalone request, whose history is capped, is used.
const minSuffixOutput = 4096

// outputBudget is the output budget of the suffix form of req with tools: req's, lowered to what the window
// leaves beside the request (about 4 chars a token, with a 10 % margin) but not under minSuffixOutput (ok
// false: it does not fit).
func (s cacheAwareSummarizer) outputBudget(req compaction.SummaryRequest, tools []provider.ToolSpec) (int, bool) {
	chars := utf8.RuneCountInString(req.SentSystem) + transcript.TotalChars(req.Sent) + utf8.RuneCountInString(compaction.SuffixPrompt(req))
	for _, t := range tools {
		raw, _ := json.Marshal(t)
		chars += len(raw)
	}
	left := s.window(req.Session)*9/10 - chars/4
	out := min(req.MaxOutputTokens, left)
	return out, out >= min(req.MaxOutputTokens, minSuffixOutput)
}
