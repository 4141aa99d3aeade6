package provider_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestAnthropic_ThinkingBudgetAndBlocks: a profile's thinkingBudget turns extended thinking on (on top of the
// reply's own output budget), and a reply's thinking blocks come back one item each, in order.
func TestAnthropic_ThinkingBudgetAndBlocks(t *testing.T) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{Text: "ok", Reasoning: "one", Thinking: []string{"two"}, RedactedThinking: "secret"},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	cfg := config.Default()
	cfg.Profiles = map[string]config.Profile{"deep": {Provider: config.Provider{Kind: "anthropic", BaseURL: hs.URL, Model: "m", ThinkingBudget: 2048}}}
	cfg.Profile = "deep"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.ActiveProvider()
	m, err := provider.Open(p, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Complete(context.Background(), provider.Request{MaxOutputTokens: 1000,
		Messages: []transcript.Message{{Role: transcript.RoleUser, Text: "think"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	thinking, _ := req["thinking"].(map[string]any)
	if thinking["type"] != "enabled" || thinking["budget_tokens"] != float64(2048) || req["max_tokens"] != float64(3048) {
		t.Fatalf("thinking %v, max_tokens %v", thinking, req["max_tokens"])
	}
	blocks, _ := rep.Message.ThinkingBlocks()
	if len(blocks) != 3 || blocks[0].Thinking != "one" || blocks[1].Type != "redacted_thinking" || blocks[2].Thinking != "two" || rep.Message.Reasoning != "one\ntwo" {
		t.Fatalf("blocks %+v reasoning %q", blocks, rep.Message.Reasoning)
	}
}
