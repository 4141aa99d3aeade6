package tools

import (
	"context"
	"errors"
)

// RecallTool is the name of the built-in that reads a session's compacted messages.
const RecallTool = "recall"

// recallDescription says what recall does and when to use it.
const recallDescription = "Search and read, word for word, the earlier messages of this conversation that a compaction replaced with a checkpoint (the checkpoint is a summary; these are the originals). Use it when exact wording matters: the user's exact requirements, code, a command and its output, an error line, a tool result the summary only mentions, or a message cut with \"… [truncated by context budget]\" (search its callId). Search with query (text, case-insensitive) and/or path (a file path) and/or callId, optionally within fromMessage–toMessage; read one message with message (its number from a search) and offset to page through a long one."

const recallParams = `{"type":"object","properties":{` +
	`"query":{"type":"string","description":"text to find, case-insensitive"},` +
	`"path":{"type":"string","description":"a file path the message or its tool calls name"},` +
	`"callId":{"type":"string","description":"a tool call ID: finds the call and its result"},` +
	`"fromMessage":{"type":"integer","minimum":0},"toMessage":{"type":"integer","minimum":0},` +
	`"message":{"type":"integer","minimum":0,"description":"read this message (a number a search gave)"},` +
	`"offset":{"type":"integer","minimum":0,"description":"with message: the character to start reading at"}},` +
	`"additionalProperties":false}`

// Recaller answers a recall call of session with its decoded arguments.
type Recaller func(ctx context.Context, session string, args map[string]any) (string, error)

type sessionKey struct{}

// WithSession returns ctx naming the session whose tool calls run with it (recall reads that session only).
func WithSession(ctx context.Context, session string) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

// errNoRecall: recall ran without a session or a store to read (a tool set used outside a turn).
var errNoRecall = errors.New("recall reads the compacted messages of a session, and this call belongs to none")

// recall runs the Recaller the agent set, for the session ctx names.
func (s *Set) recall(ctx context.Context, args map[string]any) (string, error) {
	session, _ := ctx.Value(sessionKey{}).(string)
	if s.Recall == nil || session == "" {
		return "", errNoRecall
	}
	return s.Recall(ctx, session, args)
}
