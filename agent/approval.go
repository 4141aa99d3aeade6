package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ApprovalPolicy says which tool calls wait for the user's approval before they run.
type ApprovalPolicy string

// The policies (config tools.approval).
const (
	// ApproveAsk: edits and writes wait for Accept or Reject, commands for Run or Skip.
	ApproveAsk ApprovalPolicy = "ask"
	// ApproveAutoEdit: edits and writes land; commands ask.
	ApproveAutoEdit ApprovalPolicy = "auto-edit"
	// ApproveAuto: nothing asks.
	ApproveAuto ApprovalPolicy = "auto"
)

// asks reports whether the policy makes the call named name wait for the user.
func (p ApprovalPolicy) asks(name string) bool {
	switch p {
	case ApproveAsk:
		return tools.Writes(name) || tools.Runs(name)
	case ApproveAutoEdit:
		return tools.Runs(name)
	}
	return false
}

// ApprovalRequest is what the user is asked before a call runs. For a call that writes a file it has the
// file's path, whether the file exists, and its text now and after the call.
type ApprovalRequest struct {
	Session string
	Call    transcript.ToolCall
	Command string // what a run_command call runs
	Path    string
	Existed bool
	Before  string
	After   string
}

// Approval is the user's answer. Reason, when the call was not approved without the user saying so (no answer
// in time, the editor went away), says why.
type Approval struct {
	Approved bool
	Reason   string
}

// Approver asks the user about a call and waits for the answer.
type Approver func(ctx context.Context, req ApprovalRequest) Approval

type approvalKey struct{}

type approval struct {
	policy ApprovalPolicy
	ask    Approver
}

// WithApproval returns ctx carrying the approval policy of the turns run with it and who asks the user. Without
// it a turn asks nobody (auto).
func WithApproval(ctx context.Context, policy ApprovalPolicy, ask Approver) context.Context {
	return context.WithValue(ctx, approvalKey{}, approval{policy, ask})
}

// runCall runs one call of a turn: asked first when the turn's policy wants it, its pre-image kept when it
// writes a file. declined says it did not run because the user did not approve it.
func (a *Agent) runCall(ctx context.Context, session string, call transcript.ToolCall) (out string, isErr, declined bool) {
	ctx = tools.WithSession(ctx, session)
	var change *tools.Change
	if tools.Writes(call.Name) {
		c, err := a.Tools.Propose(call.Name, call.Arguments)
		if err != nil {
			return "Error: " + err.Error(), true, false // what running it would say
		}
		change = &c
	}
	if ap, _ := ctx.Value(approvalKey{}).(approval); ap.ask != nil && ap.policy.asks(call.Name) {
		req := ApprovalRequest{Session: session, Call: call}
		if tools.Runs(call.Name) {
			req.Command = tools.CommandOf(call.Arguments)
		}
		if change != nil {
			req.Path, req.Existed, req.Before, req.After = change.Path, change.Existed, string(change.Before), string(change.After)
		}
		if ans := ap.ask(ctx, req); !ans.Approved {
			return declinedResult(call, change, ans.Reason), true, true
		}
	}
	if change == nil {
		out, isErr = a.runTool(ctx, call)
		return out, isErr, false
	}
	// The pre-image is read again now: the user may have changed the file while deciding.
	existed, before, err := a.Tools.Snapshot(change.Path)
	out, isErr = a.runTool(ctx, call)
	if isErr || err != nil {
		return out, isErr, false
	}
	_, after, _ := a.Tools.Snapshot(change.Path)
	sum := sha256.Sum256(after)
	if err := a.Store.SaveFileChange(session, storage.FileChange{CallID: call.ID, Path: change.Path, Existed: existed, Before: before,
		AfterSum: hex.EncodeToString(sum[:])}); err != nil {
		a.Log.Warn("the change could not be kept for undo", zap.String("path", change.Path), zap.Error(err))
		return out + "\n(note: the file's earlier content could not be kept, so this change cannot be undone)", false, false
	}
	return out, false, false
}

// declinedResult is the result of a call the user did not approve: it says what did not happen, and why.
func declinedResult(call transcript.ToolCall, change *tools.Change, reason string) string {
	what, notDone := "The user declined this command; it was not run.", "it was not run"
	if change != nil {
		what = fmt.Sprintf("The user rejected this change to %s; the file was not changed.", change.Path)
		notDone = fmt.Sprintf("%s was not changed", change.Path)
	}
	if reason != "" { // nobody said no: say what happened, not that the user declined
		what = fmt.Sprintf("%s: counted as declined; %s.", reason, notDone)
	}
	return what + " Ask the user what they want instead, or go on without it."
}

// DefaultApprovalTimeout is how long a call waits for the user's answer when tools.approvalTimeoutSeconds is
// not set.
const DefaultApprovalTimeout = 10 * time.Minute
