package api

import (
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// CallState says how a tool call of a page ended.
type CallState string

// The states of a tool call.
const (
	// CallDone: its result follows it.
	CallDone CallState = "done"
	// CallFailed: its result follows it and says the tool failed.
	CallFailed CallState = "failed"
	// CallDeclined: it did not run, because the user did not approve it; its result says so.
	CallDeclined CallState = "declined"
	// CallUncertain: a crash cut it off; nobody knows whether it ran (recovery records that).
	CallUncertain CallState = "uncertain"
	// CallRunning: no result yet (the turn is running, or its result is past the page's end).
	CallRunning CallState = "running"
)

// CallOutcome is what became of one tool call: where its result is in the page and how it ended.
type CallOutcome struct {
	// Result is the index in the page's Messages of the call's result, -1 when the page holds none.
	Result int       `json:"result"`
	State  CallState `json:"state"`
	// ExitCode is a command's exit status (run_command).
	ExitCode *int `json:"exitCode,omitempty"`
}

// ExitCode is the exit status a run_command result starts with ("exit code N"), nil for other results.
func ExitCode(tool, result string) *int {
	var code int
	if tool != "run_command" {
		return nil
	}
	if _, err := fmt.Sscanf(result, "exit code %d", &code); err != nil {
		return nil
	}
	return &code
}

// PageMessage is a message of alisio/session's page, with the outcome of each of its tool calls, so that
// no client pairs calls with results itself.
type PageMessage struct {
	transcript.Message
	// Outcomes parallel ToolCalls (assistant messages only).
	Outcomes []CallOutcome `json:"outcomes,omitempty"`
	// Chars is the message's size as compaction counts it (text, reasoning, tool calls): the boundary's
	// figures are the compaction's.
	Chars int `json:"chars"`
}

// Pair gives each tool call of messages its result: the first tool message with its ID that follows it before
// the next assistant message (IDs may be reused later in a session: SWE-agent numbers them). uncertain lists
// the IDs of calls a crash left without a result.
func Pair(messages []transcript.Message, uncertain []string) []PageMessage {
	open := make(map[string]bool, len(uncertain))
	for _, id := range uncertain {
		open[id] = true
	}
	out := make([]PageMessage, len(messages))
	for i, m := range messages {
		out[i].Message = m
		out[i].Chars = m.Chars()
		if m.Role != transcript.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		out[i].Outcomes = make([]CallOutcome, len(m.ToolCalls))
		for k, c := range m.ToolCalls {
			o := CallOutcome{Result: -1, State: CallRunning}
			for j := i + 1; j < len(messages) && messages[j].Role != transcript.RoleAssistant; j++ {
				if r := messages[j]; r.Role == transcript.RoleTool && r.ToolCallID == c.ID {
					o = CallOutcome{Result: j, State: CallDone, ExitCode: ExitCode(c.Name, r.Text)}
					switch {
					case r.Declined:
						o.State = CallDeclined
					case r.IsError:
						o.State = CallFailed
					}
					break
				}
			}
			if o.Result < 0 && open[c.ID] {
				o.State = CallUncertain
			}
			out[i].Outcomes[k] = o
		}
	}
	return out
}
