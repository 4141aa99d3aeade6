// Package api is the alisio/* protocol: the params and results of every method, the alisio/event and
// alisio/status notifications, and the data an error carries, as the daemon encodes them and the CLI's --json
// prints them. docs/protocol.md describes each method; editors/vscode/src/protocol.ts mirrors these types
// (TestTypeScriptMirror keeps the two in step). The words a user reads are not here: errors carry a Kind and
// the data it needs, and the daemon and the CLI write the sentence.
package api

import (
	"encoding/json"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// SchemaVersion is the "v" of every notification and every --json line.
const SchemaVersion = 1

// ProtocolVersion is the version initialize announces.
const ProtocolVersion = 1

// SessionRef names the session a method acts on; empty means the workspace's most recent one.
type SessionRef struct {
	Session string `json:"session"`
}

// Ref returns the reference, for the daemon to fill in the most recent session.
func (r *SessionRef) Ref() *SessionRef { return r }

// PromptParams are alisio/prompt's: the user's text, in the session (a new one when the workspace has none).
type PromptParams struct {
	SessionRef
	Text          string          `json:"text"`
	WorkDoneToken json.RawMessage `json:"workDoneToken,omitempty"`
}

// PromptResult is a completed turn: the final reply, the model calls it took, and whether the reply budget
// cut it.
type PromptResult struct {
	Session    string `json:"session"`
	Reply      string `json:"reply"`
	ModelCalls int    `json:"modelCalls"`
	Cut        bool   `json:"cut"`
}

// CompactParams are alisio/compact's: an optional focus for the summary.
type CompactParams struct {
	SessionRef
	Focus         string          `json:"focus"`
	WorkDoneToken json.RawMessage `json:"workDoneToken,omitempty"`
}

// CompactResult is the completed compaction's event (as alisio/event sent it) and checkpoint.
type CompactResult struct {
	Session    string                `json:"session"`
	Event      Event                 `json:"event"`
	Checkpoint compaction.Checkpoint `json:"checkpoint"`
}

// RecoverParams are alisio/recover's: without Acknowledge the uncertain calls are only listed (as an error).
type RecoverParams struct {
	SessionRef
	Acknowledge bool `json:"acknowledge"`
}

// RecoverResult is what was recorded.
type RecoverResult struct {
	Session   string                `json:"session"`
	Recovered int                   `json:"recovered"`
	Calls     []transcript.ToolCall `json:"calls"`
}

// SessionsParams are alisio/sessions': the workspace's sessions, or all with All.
type SessionsParams struct {
	All bool `json:"all"`
}

// SessionSummary is one line of a session list.
type SessionSummary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Workspace string    `json:"workspace"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Messages are those the model receives; CompactedMessages the originals compaction replaced (kept).
	Messages          int `json:"messages"`
	CompactedMessages int `json:"compactedMessages"`
}

// SessionsResult is the list, most recent first.
type SessionsResult struct {
	Sessions []SessionSummary `json:"sessions"`
}

// SessionParams are alisio/session's: a page of the transcript (Offset -1, the default: the last Limit
// messages; Limit 0: all), with the compacted originals when IncludeCompacted.
type SessionParams struct {
	SessionRef
	IncludeCompacted bool `json:"includeCompacted"`
	Offset           *int `json:"offset"`
	Limit            *int `json:"limit"`
}

// SessionResult is the page: its messages with the outcome of their tool calls.
type SessionResult struct {
	Session           storage.Session `json:"session"`
	Messages          []PageMessage   `json:"messages"`
	Offset            int             `json:"offset"`
	Total             int             `json:"total"`
	CompactedMessages int             `json:"compactedMessages"`
	UncertainCalls    []string        `json:"uncertainCalls"`
}

// NewSessionParams are alisio/newSession's.
type NewSessionParams struct {
	Title string `json:"title"`
}

// NewSessionResult names the new session.
type NewSessionResult struct {
	Session string `json:"session"`
}

// ContextParams are alisio/context's.
type ContextParams struct {
	SessionRef
}

// ContextResult is what fills the session's transcript, by kind.
type ContextResult struct {
	Session string              `json:"session"`
	Parts   []agent.ContextPart `json:"parts"`
}

// CheckpointParams are alisio/checkpoint's.
type CheckpointParams struct {
	SessionRef
}

// CheckpointResult is the current checkpoint (Checkpoint nil when the session has none), what it replaced,
// and the relevant files changed since it was written.
type CheckpointResult struct {
	Session                   string                 `json:"session"`
	ID                        string                 `json:"id,omitempty"`
	CreatedAt                 string                 `json:"createdAt,omitempty"`
	Checkpoint                *compaction.Checkpoint `json:"checkpoint"`
	Partial                   bool                   `json:"partial,omitempty"`
	Text                      string                 `json:"text,omitempty"`
	ReplacedMessages          int                    `json:"replacedMessages,omitempty"`
	RelevantFilesChangedSince []string               `json:"relevantFilesChangedSince,omitempty"`
	// Editable is the checkpoint as the document a user edits (alisio/setCheckpoint takes it back).
	Editable json.RawMessage `json:"editable,omitempty"`
}

// SetCheckpointParams are alisio/setCheckpoint's: the edited checkpoint, in CheckpointResult.Editable's shape,
// as a JSON object or as its text (a JSON string), which an editor sends as the user typed it.
type SetCheckpointParams struct {
	SessionRef
	Checkpoint json.RawMessage `json:"checkpoint"`
	// Base is the ID of the checkpoint the edit began from (CheckpointResult.ID): when another is in force now
	// (a compaction wrote one meanwhile), nothing is saved (KindCheckpointChanged). Empty: no such check.
	Base string `json:"base,omitempty"`
}

// Document is the edited checkpoint's JSON text.
func (p *SetCheckpointParams) Document() []byte {
	var text string
	if len(p.Checkpoint) > 0 && p.Checkpoint[0] == '"' && json.Unmarshal(p.Checkpoint, &text) == nil {
		return []byte(text)
	}
	return p.Checkpoint
}

// ToolsParams are alisio/tools' (none).
type ToolsParams struct{}

// ToolsResult is the tool catalog by source, and what confines run_command.
type ToolsResult = tools.Description

// MemoriesParams are alisio/memories': Delete names a memory to delete first.
type MemoriesParams struct {
	Delete string `json:"delete"`
}

// MemoriesResult is the workspace's memories, oldest first; Sent is how many of them (the newest) a request
// sends within memory.maxChars, MaxChars that setting.
type MemoriesResult struct {
	Workspace string           `json:"workspace"`
	Memories  []storage.Memory `json:"memories"`
	Sent      int              `json:"sent"`
	MaxChars  int              `json:"maxChars"`
}

// StatusParams are alisio/status's.
type StatusParams struct {
	SessionRef
	// FirstRequest: in a workspace with no session yet, the meter of its first request (no session ID, no
	// messages: the instructions and the tool catalog) instead of an error.
	FirstRequest bool `json:"firstRequest,omitempty"`
	// NewSession (with no session given): the meter of a new session's first request, whatever sessions the
	// workspace has (the terminal chat before the first message of a session it will make).
	NewSession bool `json:"newSession,omitempty"`
}

// Status is the meter of a session: the alisio/status result and notification.
type Status struct {
	V int `json:"v"`
	agent.Status
	// Compacting is set while a compaction of the session runs.
	Compacting bool `json:"compacting"`
	// ChangedElsewhere is set on a meter sent because another window or the command line wrote the session
	// since this connection's last meter of it (a turn, a compaction, an undo): a client that shows the
	// conversation reads it again.
	ChangedElsewhere bool `json:"changedElsewhere,omitempty"`
	// Notices are what the user should read about the session's state (Notices), in the editors' words.
	Notices []Notice `json:"notices,omitempty"`
	Meter
}
