package compaction

import (
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// The offline summarizer's requests carry no rendered prompt; a model's do.
func TestBuildRequest_PromptOnlyForModels(t *testing.T) {
	span := []transcript.Message{{Role: transcript.RoleUser, Text: "fix the parser"}}
	if req := buildRequest(Offline{}, span, nil, "", 100, nil); req.Prompt != "" || len(req.Span) != 1 {
		t.Fatalf("offline request %+v", req)
	}
	var model Summarizer = struct{ Summarizer }{}
	if req := buildRequest(model, span, nil, "tests", 100, nil); !strings.Contains(req.Prompt, "fix the parser") || !strings.Contains(req.Prompt, "tests") {
		t.Fatalf("model request %+v", req)
	}
}
