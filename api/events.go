package api

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// The event types besides compaction's (compaction.EventStarted …).
const (
	EventDelta      = "delta"
	EventToolCall   = "tool_call"
	EventToolResult = "tool_result"
	EventReply      = "reply"
)

// Event is one alisio/event notification, and one --json line of a turn: what a turn reports as it runs.
// Type says which fields are set: the compaction events (compaction_* and context_reduced) carry
// compaction.Event's; delta Text and Reasoning; tool_call ID, Name and Arguments; tool_result ID, Name,
// IsError, Declined, Chars and a command's ExitCode; reply Text.
type Event struct {
	V       int    `json:"v"`
	Session string `json:"session"`
	Type    string `json:"type"`
	// Summary is the sentence a user reads for a compaction event (api.Summary): editors show it as it is.
	Summary string `json:"summary,omitempty"`
	*compaction.Event
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	IsError   *bool  `json:"isError,omitempty"`
	// Declined: the call did not run because the user did not approve it.
	Declined bool `json:"declined,omitempty"`
	Chars    *int `json:"chars,omitempty"`
	// ExitCode is a command's exit status (run_command results).
	ExitCode *int `json:"exitCode,omitempty"`
}

// MarshalJSON encodes e with encoding/json: the JSON-RPC library's encoder (segmentio/encoding) drops the
// text, boolean and list fields of the embedded compaction event and writes its zero numbers.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(plain(e))
}

// CauseStopped is the cause of a compaction_failed event whose compaction was stopped by the user.
const CauseStopped = compaction.CauseStopped

// EventOf is the event a turn's agent.Event is sent as (ok false for what is not sent).
func EventOf(e agent.Event) (ev Event, ok bool) {
	ev = Event{V: SchemaVersion, Session: e.Session}
	switch e.Kind {
	case agent.EventCompaction:
		c := e.Compaction
		ev.Type, ev.Event, ev.Summary = c.Type, &c, Summary(c)
	case agent.EventDelta:
		ev.Type, ev.Text, ev.Reasoning = EventDelta, e.Delta.Text, e.Delta.Reasoning
	case agent.EventToolCall:
		ev.Type, ev.ID, ev.Name, ev.Arguments = EventToolCall, e.Call.ID, e.Call.Name, e.Call.Arguments
	case agent.EventToolResult:
		isError, chars := e.IsError, utf8.RuneCountInString(e.Result)
		ev.Type, ev.ID, ev.Name, ev.IsError, ev.Chars, ev.Declined = EventToolResult, e.Call.ID, e.Call.Name, &isError, &chars, e.Declined
		ev.ExitCode = ExitCode(e.Call.Name, e.Result)
	case agent.EventReply:
		ev.Type, ev.Text = EventReply, e.Result
	default:
		return ev, false
	}
	return ev, true
}

// CompactionEvent is a compaction event outside a turn (a manual compaction) as sent.
func CompactionEvent(session string, c compaction.Event) Event {
	return Event{V: SchemaVersion, Session: session, Type: c.Type, Summary: Summary(c), Event: &c}
}
