package api

import (
	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ApprovalKind says what a call asks to do.
type ApprovalKind string

// The kinds of call the user approves.
const (
	// ApproveEdit: the call writes a file (edit_file, write_file): Path and NewText say how.
	ApproveEdit ApprovalKind = "edit"
	// ApproveCommand: the call runs a command (run_command).
	ApproveCommand ApprovalKind = "command"
)

// ApproveParams are alisio/approve's, a request (or, to a client that announced "notification", a
// notification answered with alisio/approvalAnswer) the daemon sends before a call runs.
type ApproveParams struct {
	V       int                 `json:"v"`
	Session string              `json:"session"`
	Kind    ApprovalKind        `json:"kind"`
	Call    transcript.ToolCall `json:"call"`
	// Path is the file an edit writes (relative to the workspace); Exists says whether it exists now; NewText
	// is what it will hold.
	Path    string `json:"path,omitempty"`
	Exists  bool   `json:"exists,omitempty"`
	NewText string `json:"newText,omitempty"`
	// Command is what a command call runs.
	Command string `json:"command,omitempty"`
	// Approval names the question for alisio/approvalAnswer (notification form only).
	Approval string `json:"approval,omitempty"`
	// TimeoutSeconds is how long the daemon waits for the answer before it counts as a rejection.
	TimeoutSeconds int `json:"timeoutSeconds"`
}

// ApproveResult is the user's answer.
type ApproveResult struct {
	Approved bool `json:"approved"`
}

// ApprovalAnswerParams are alisio/approvalAnswer's: the answer to the notification form of alisio/approve.
type ApprovalAnswerParams struct {
	Approval string `json:"approval"`
	Approved bool   `json:"approved"`
}

// UndoTurnParams are alisio/undoTurn's: Force restores files changed since the turn too.
type UndoTurnParams struct {
	SessionRef
	Force bool `json:"force"`
}

// UndoTurnResult says what the undo did.
type UndoTurnResult struct {
	Session string `json:"session"`
	agent.UndoResult
}

// CheckProviderParams are alisio/checkProvider's (none).
type CheckProviderParams struct{}

// CheckProviderResult is what the provider answered.
type CheckProviderResult = agent.ProviderCheck
