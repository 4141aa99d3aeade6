package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

func editThenCommand() *providertest.Script {
	return &providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "edit_file", Arguments: `{"path":"main.go","oldText":"package main","newText":"package main // edited"}`},
			{ID: "c2", Name: "run_command", Arguments: `{"command":"echo hi > made.txt"}`},
		}},
		{Text: "Done."},
	}}
}

// resultOf is the text of the tool result answering call in the session's transcript.
func (e *env) resultOf(t *testing.T, session, call string) string {
	t.Helper()
	v, err := e.store.Transcript(session)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(v.Messages); err != nil {
		t.Fatal(err)
	}
	for _, m := range v.Messages {
		if m.ToolCallID == call {
			return m.Text
		}
	}
	return ""
}

func (e *env) read(p string) string {
	b, err := os.ReadFile(filepath.Join(e.ws, p))
	if err != nil {
		return "(none)"
	}
	return string(b)
}

// TestApproval_Request: an editor that announces it answers alisio/approve gets every edit (path and new text)
// and command before it runs; what it rejects does not happen and the model reads so; alisio/undoTurn puts the
// edited file back.
func TestApproval_Request(t *testing.T) {
	e := start(t, editThenCommand(), nil)
	var asked []api.ApproveParams
	e.client.Experimental = map[string]any{"alisio": map[string]any{"approve": "request"}}
	e.client.OnRequest = func(_ context.Context, method string, raw json.RawMessage) (any, error) {
		if method != "alisio/approve" {
			return nil, nil // window/workDoneProgress/create
		}
		var p api.ApproveParams
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Errorf("request %s %s: %v", method, raw, err)
		}
		asked = append(asked, p)
		return api.ApproveResult{Approved: p.Kind == api.ApproveEdit}, nil
	}
	e.init(t, nil)
	var res api.PromptResult
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "mark main"}, &res); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 || asked[0].Path != "main.go" || asked[0].NewText != "package main // edited\n" || !asked[0].Exists ||
		asked[1].Kind != api.ApproveCommand || asked[1].Command != "echo hi > made.txt" || asked[1].TimeoutSeconds != 600 {
		t.Fatalf("asked %+v", asked)
	}
	if e.read("main.go") != "package main // edited\n" || e.read("made.txt") != "(none)" {
		t.Fatalf("after the turn: main.go %q, made.txt %q", e.read("main.go"), e.read("made.txt"))
	}
	if r := e.resultOf(t, res.Session, "c2"); !strings.Contains(r, "The user declined this command") {
		t.Fatalf("the declined command's result: %q", r)
	}
	// The editors draw the declined call as one that did not run, not as a failure: its event and its outcome
	// in the session's page say so.
	declinedEvents := map[string]bool{}
	for _, n := range e.client.Notifications("alisio/event") {
		var ev api.Event
		if json.Unmarshal(n.Params, &ev) == nil && ev.Type == api.EventToolResult {
			declinedEvents[ev.ID] = ev.Declined
		}
	}
	if !declinedEvents["c2"] || declinedEvents["c1"] || len(declinedEvents) != 2 {
		t.Fatalf("tool_result events' declined: %v", declinedEvents)
	}
	var page api.SessionResult
	if err := e.client.Call(ctx(t), "alisio/session", map[string]any{"session": res.Session}, &page); err != nil {
		t.Fatal(err)
	}
	states := map[string]api.CallState{}
	for _, m := range page.Messages {
		for i, c := range m.ToolCalls {
			states[c.ID] = m.Outcomes[i].State
		}
	}
	if states["c1"] != api.CallDone || states["c2"] != api.CallDeclined {
		t.Fatalf("the page's outcomes: %v", states)
	}
	var undo api.UndoTurnResult
	if err := e.client.Call(ctx(t), "alisio/undoTurn", map[string]any{}, &undo); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(undo.Restored, []string{"main.go"}) || e.read("main.go") != "package main\n" {
		t.Fatalf("undo %+v, main.go %q", undo, e.read("main.go"))
	}
	err := e.client.Call(ctx(t), "alisio/undoTurn", map[string]any{}, nil)
	if data := errorData(err); data.Kind != api.KindNothingToUndo {
		t.Fatalf("a second undo: %v (%+v)", err, data)
	}
}

// TestApproval_NotificationAndTimeout: a client that answers by alisio/approvalAnswer (Neovim) gets the
// question as a notification; one that never answers has the call declined after tools.approvalTimeoutSeconds,
// the model told why, and the question withdrawn.
func TestApproval_NotificationAndTimeout(t *testing.T) {
	e := start(t, editThenCommand(), func(c *config.Config) { c.Tools.ApprovalTimeoutSeconds = 1 })
	e.client.Experimental = map[string]any{"alisio": map[string]any{"approve": "notification"}}
	e.init(t, nil)
	done := make(chan error, 1)
	var res api.PromptResult
	go func() { done <- e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "mark main"}, &res) }()
	// The edit is accepted through alisio/approvalAnswer; the command is left unanswered.
	e.client.Await(t, 10*time.Second, "the edit's question", func(n []servertest.Notification) bool { return len(approvals(n)) >= 1 })
	q := approvals(e.client.Notifications("alisio/approve"))[0]
	if q.Kind != api.ApproveEdit || q.Approval == "" {
		t.Fatalf("question %+v", q)
	}
	if err := e.client.Call(ctx(t), "alisio/approvalAnswer", map[string]any{"approval": q.Approval, "approved": true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e.read("main.go") != "package main // edited\n" || e.read("made.txt") != "(none)" {
		t.Fatalf("after the turn: main.go %q, made.txt %q", e.read("main.go"), e.read("made.txt"))
	}
	if r := e.resultOf(t, res.Session, "c2"); !strings.HasPrefix(r, "No answer from the editor within 1s: counted as declined; it was not run.") {
		t.Fatalf("the unanswered command's result: %q", r)
	}
	if len(e.client.Notifications("alisio/approvalWithdrawn")) != 1 {
		t.Error("the unanswered question was not withdrawn")
	}
	// A late answer is refused with a sentence, not applied.
	last := approvals(e.client.Notifications("alisio/approve"))[1]
	if err := e.client.Call(ctx(t), "alisio/approvalAnswer", map[string]any{"approval": last.Approval, "approved": true}, nil); err == nil ||
		!strings.Contains(err.Error(), "no longer waits") {
		t.Fatalf("a late answer: %v", err)
	}
}

// TestApproval_OtherClientsRunUnasked: a client that does not announce approvals (the CLI, another LSP client)
// is never asked, unless tools.approval is set, which holds for every client.
func TestApproval_OtherClientsRunUnasked(t *testing.T) {
	e := start(t, editThenCommand(), nil)
	e.init(t, nil)
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "mark main"}, nil); err != nil {
		t.Fatal(err)
	}
	// (cmd.exe's echo writes "hi \r\n".)
	if slices.Contains(e.client.ServerRequests(), "alisio/approve") || strings.TrimSpace(e.read("made.txt")) != "hi" {
		t.Fatalf("requests %v, made.txt %q", e.client.ServerRequests(), e.read("made.txt"))
	}
	strict := start(t, editThenCommand(), func(c *config.Config) { c.Tools.Approval = "auto-edit" })
	strict.init(t, nil)
	var res api.PromptResult
	if err := strict.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "mark main"}, &res); err != nil {
		t.Fatal(err)
	}
	// The edit landed unasked; the command was asked of a client that answers nothing useful: declined.
	if strict.read("main.go") != "package main // edited\n" || strict.read("made.txt") != "(none)" {
		t.Fatalf("auto-edit: main.go %q, made.txt %q", strict.read("main.go"), strict.read("made.txt"))
	}
	if !slices.Contains(strict.client.ServerRequests(), "alisio/approve") {
		t.Error("the command was not asked about")
	}
}

func approvals(n []servertest.Notification) []api.ApproveParams {
	var out []api.ApproveParams
	for _, x := range n {
		if x.Method == "alisio/approve" {
			var p api.ApproveParams
			_ = json.Unmarshal(x.Params, &p)
			out = append(out, p)
		}
	}
	return out
}

// errorData is the data of a failed request's JSON-RPC error.
func errorData(err error) api.ErrorData {
	var je *jsonrpc2.Error
	var data api.ErrorData
	if errors.As(err, &je) && je.Data != nil {
		_ = json.Unmarshal(*je.Data, &data)
	}
	return data
}

// TestCheckProvider: the provider's model list answers with the window; a server that does not answer gets a
// sentence naming it.
func TestCheckProvider(t *testing.T) {
	e := start(t, &providertest.Script{Models: []map[string]any{{"id": "alisio-test", "context_length": 32768}}}, nil)
	e.init(t, nil)
	var res api.CheckProviderResult
	if err := e.client.Call(ctx(t), "alisio/checkProvider", map[string]any{}, &res); err != nil || res.Window != 32768 || res.Model != "alisio-test" {
		t.Fatalf("check %+v %v", res, err)
	}
	down := start(t, nil, func(c *config.Config) {
		c.Provider = config.Provider{Kind: "openai", BaseURL: "http://127.0.0.1:1/v1", Model: "m"}
	})
	down.init(t, nil)
	err := down.client.Call(ctx(t), "alisio/checkProvider", map[string]any{}, nil)
	if err == nil || !strings.Contains(err.Error(), "the provider does not answer at http://127.0.0.1:1/v1 (asked for its model list)") || errorData(err).Kind != api.KindModelCall {
		t.Fatalf("a provider that does not answer: %v", err)
	}
	none := start(t, nil, nil)
	none.init(t, nil)
	if err := none.client.Call(ctx(t), "alisio/checkProvider", map[string]any{}, nil); errorData(err).Kind != api.KindNoProvider ||
		!strings.Contains(err.Error(), "Alisio: Set Up Provider") {
		t.Fatalf("no provider: %v", err)
	}
}
