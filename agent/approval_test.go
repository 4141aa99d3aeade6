package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// TestAgent_ApprovalAndUndo: under "ask" the editor sees each edit (the file's text now and after) and each
// command before it runs; a rejected one becomes a result saying the user declined (the pairing holds), an
// accepted one lands with its pre-image kept; undoing the turn restores every file it wrote — a created one
// removed — and leaves a file changed since alone unless forced.
func TestAgent_ApprovalAndUndo(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{
			call("c1", "edit_file", `{"path":"main.go","oldText":"func main() {}","newText":"func main() { println(1) }"}`),
			call("c2", "run_command", `{"command":"echo rm -rf ."}`),
			call("c3", "write_file", `{"path":"docs/new.md","content":"# new\n"}`),
			call("c4", "edit_file", `{"path":"main.go","oldText":"println(1)","newText":"println(2)"}`),
			call("c5", "write_file", `{"path":"notes.txt","content":"agent's"}`),
		}},
		{Text: "Done."},
		{Text: "ok"},
	}})
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.session(t)
	var mu sync.Mutex
	var asked []agent.ApprovalRequest
	ask := func(_ context.Context, r agent.ApprovalRequest) agent.Approval {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r)
		return agent.Approval{Approved: r.Call.Name != "run_command"}
	}
	ctx := agent.WithApproval(context.Background(), agent.ApproveAsk, ask)
	if _, err := h.agent.Prompt(ctx, id, "print 1 then 2"); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 5 || asked[0].Path != "main.go" || !asked[0].Existed || asked[0].Before != "package main\n\nfunc main() {}\n" ||
		!strings.Contains(asked[0].After, "println(1)") || asked[2].Existed || asked[2].After != "# new\n" || asked[1].Path != "" {
		t.Fatalf("asked %+v", asked)
	}
	view, _ := h.store.Transcript(id)
	var declined transcript.Message
	for _, m := range view.Messages {
		if m.ToolCallID == "c2" {
			declined = m
		}
	}
	if !declined.IsError || !declined.Declined || !strings.Contains(declined.Text, "The user declined this command; it was not run.") {
		t.Fatalf("the declined command's result: %+v", declined)
	}
	read := func(p string) string {
		b, err := os.ReadFile(filepath.Join(h.ws, p))
		if err != nil {
			return "(none)"
		}
		return string(b)
	}
	if !strings.Contains(read("main.go"), "println(2)") || read("docs/new.md") != "# new\n" || read("notes.txt") != "agent's" {
		t.Fatalf("after the turn: %q %q %q", read("main.go"), read("docs/new.md"), read("notes.txt"))
	}
	// The user changes notes.txt after the turn: undo leaves it alone and says so.
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("mine again"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := h.agent.UndoTurn(id, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Restored, ",") != "main.go,docs/new.md" || strings.Join(res.ChangedSince, ",") != "notes.txt" {
		t.Fatalf("undo %+v", res)
	}
	if read("main.go") != "package main\n\nfunc main() {}\n" || read("docs/new.md") != "(none)" || read("notes.txt") != "mine again" {
		t.Fatalf("after undo: %q %q %q", read("main.go"), read("docs/new.md"), read("notes.txt"))
	}
	// The model reads that the changes are gone; the next prompt still works.
	if _, err := h.agent.Prompt(context.Background(), id, "thanks"); err != nil {
		t.Fatal(err)
	}
	reqs := h.server.Requests()
	if !strings.Contains(stringify(reqs[len(reqs)-1]["messages"]), "undid the file changes of the previous turn: main.go, docs/new.md") {
		t.Error("the model was not told about the undo")
	}
	h.checkAll(t, id)
	// The last turn ("thanks") changed nothing; the forced undo of the earlier one is not reached again.
	if _, err := h.agent.UndoTurn(id, true); !errors.Is(err, agent.ErrNothingToUndo) {
		t.Fatalf("undo of a turn without changes: %v", err)
	}
}

// TestAgent_UndoForcedAndAutoPolicy: with no approval in the context nothing asks (the CLI's default), and a
// forced undo restores a file changed since too.
func TestAgent_UndoForcedAndAutoPolicy(t *testing.T) {
	h := newHarness(t, config.Default(), providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{call("c1", "write_file", `{"path":"main.go","content":"package main\n"}`)}},
		{Text: "Done."},
	}})
	id := h.session(t)
	if _, err := h.agent.Prompt(context.Background(), id, "shorten main"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.ws, "main.go"), []byte("package main // mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := h.agent.UndoTurn(id, true)
	if err != nil || len(res.Restored) != 1 || len(res.ChangedSince) != 0 {
		t.Fatalf("forced undo %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "main.go")); string(b) != "package main\n\nfunc main() {}\n" {
		t.Fatalf("main.go after a forced undo: %q", b)
	}
	h.checkAll(t, id)
}
