// Package transcript is the conversation model every other package shares: messages, tool calls, character
// counts, turns and safe boundaries (SPEC §0 "Words"), and the Rewrite that describes a compaction or a
// reduction of the effective transcript.
package transcript

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Role is the author of a message.
type Role string

// The four roles of SPEC §0.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the four known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// ToolCall is one call an assistant message asks for. ID and Arguments (the raw JSON text the model sent)
// are kept byte-exact (G1).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ProviderItem is an opaque item a provider attached to a message (for example encrypted reasoning of the
// Responses API, or an Anthropic thinking block). Data is stored and replayed byte-exact.
type ProviderItem struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// InputObject is the call's arguments as a JSON object, as Anthropic's tool_use input requires: byte-exact
// when they are one, else wrapped as {"_raw_arguments": "..."} so that the request stays valid.
func (c ToolCall) InputObject() json.RawMessage {
	trimmed := strings.TrimSpace(c.Arguments)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(map[string]string{"_raw_arguments": c.Arguments})
	return b
}

// Usage is the token use a provider reported for the reply that produced a message.
type Usage struct {
	// PromptTokens is the whole input of the request, cached or not.
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
	// CachedTokens is the part of PromptTokens read from the provider's prompt cache (billed at about a tenth),
	// CacheWriteTokens the part written to it (Anthropic: billed at 125 %); the rest is uncached input.
	CachedTokens     int `json:"cachedTokens,omitempty"`
	CacheWriteTokens int `json:"cacheWriteTokens,omitempty"`
	// RequestChars is the request's size in chars as the agent measured it (instructions, tool catalog and
	// transcript): beside PromptTokens it calibrates the context meter, also after a restart (0: not measured).
	RequestChars int `json:"requestChars,omitempty"`
}

// Message is one entry of the transcript.
type Message struct {
	// ID is stable for the life of the message; a reduced copy gets a new ID and names the original in OriginalID.
	ID   string `json:"id"`
	Role Role   `json:"role"`
	Text string `json:"text,omitempty"`
	// Reasoning is reasoning text sent back to the provider (reasoning_content, Anthropic thinking).
	Reasoning string `json:"reasoning,omitempty"`
	// ToolCalls are the calls of an assistant message.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers; ToolName names its tool when known.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
	// Declined marks the result of a call that did not run because the user did not approve it (a no, or no
	// answer in time); IsError is set too, so that a provider sees a failed call.
	Declined bool           `json:"declined,omitempty"`
	Items    []ProviderItem `json:"items,omitempty"`
	// Summary marks a checkpoint written by compaction (C1); Structured holds its fields for the editor and
	// Partial says the summarizer's output budget cut it (P2).
	Summary    bool            `json:"summary,omitempty"`
	Structured json.RawMessage `json:"structured,omitempty"`
	Partial    bool            `json:"partial,omitempty"`
	// Compacted marks a message replaced by a checkpoint or a reduced copy; it is never sent again. The store
	// derives it when it reads the full history.
	Compacted bool `json:"compacted,omitempty"`
	// Undone marks a checkpoint or reduced copy whose compaction was undone (alisio/undoCompaction); the store
	// derives it when it reads the full history, as it does Compacted.
	Undone bool `json:"undone,omitempty"`
	// Truncated marks a copy cut by the context budget (R3); OriginalID names the message it was cut from.
	Truncated  bool      `json:"truncated,omitempty"`
	OriginalID string    `json:"originalId,omitempty"`
	CreatedAt  time.Time `json:"createdAt"`
	Usage      *Usage    `json:"usage,omitempty"`
	// measured is Chars()+1 as cached by Measure, 0 when not measured.
	measured int
}

// IDs are not secrets: drawing their randomness from a pool filled in batches keeps NewID off a getrandom
// system call per message (it is on every append's path).
func init() { uuid.EnableRandPool() }

// NewID returns a new time-ordered message or session ID.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }

// Chars counts the Unicode code points the message sends: its text, reasoning, tool call names and
// arguments. JSON punctuation and opaque provider items do not count (SPEC §0 "chars"). It returns the count
// cached by Measure when there is one, so that measuring a long transcript again costs nothing.
func (m *Message) Chars() int {
	if m.measured > 0 {
		return m.measured - 1
	}
	return m.count()
}

// Measure caches the message's char count for Chars. Whoever builds a message that stays (the store when it
// reads or writes one, an import, a reduction's cut copy) measures it once, after its last change to Text,
// Reasoning or ToolCalls.
func (m *Message) Measure() { m.measured = m.count() + 1 }

func (m *Message) count() int {
	n := utf8.RuneCountInString(m.Text) + utf8.RuneCountInString(m.Reasoning)
	for _, c := range m.ToolCalls {
		n += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
	}
	return n
}

// TotalChars sums Chars over msgs.
func TotalChars(msgs []Message) int {
	n := 0
	for i := range msgs {
		n += msgs[i].Chars()
	}
	return n
}

// EstimateTokens is the SPEC's estimate: ceil(chars / 4).
func EstimateTokens(chars int) int { return (chars + 3) / 4 }

// StartsTurn reports whether m opens a turn: a real user message (a checkpoint does not).
func (m *Message) StartsTurn() bool { return m.Role == RoleUser && !m.Summary }

// TurnStarts returns the indexes of the messages that open a turn, in order.
func TurnStarts(msgs []Message) []int {
	var starts []int
	for i := range msgs {
		if msgs[i].StartsTurn() {
			starts = append(starts, i)
		}
	}
	return starts
}

// SafeBoundaries returns every position p (0 ≤ p ≤ len(msgs)) between msgs[p-1] and msgs[p] where no tool call
// issued before p is still waiting for its result at or after p. Cutting there never separates a call from
// its result (G1). Positions 0 and len(msgs) are included when safe; len(msgs) is unsafe while a call is
// pending.
func SafeBoundaries(msgs []Message) []int {
	safe := make([]int, 0, len(msgs)+1)
	w := NewPendingCalls()
	for p := 0; p <= len(msgs); p++ {
		if w.Len() == 0 {
			safe = append(safe, p)
		}
		if p < len(msgs) {
			w.Observe(&msgs[p])
		}
	}
	return safe
}

// PendingCalls tracks the tool calls still waiting for a result while walking a transcript in order.
type PendingCalls struct {
	open  map[string]int // call ID → index of the call in order of appearance
	order []ToolCall
}

// NewPendingCalls returns an empty tracker.
func NewPendingCalls() *PendingCalls { return &PendingCalls{open: map[string]int{}} }

// Observe records the calls m issues and the result it carries.
func (w *PendingCalls) Observe(m *Message) {
	for _, c := range m.ToolCalls {
		w.open[c.ID] = len(w.order)
		w.order = append(w.order, c)
	}
	if m.Role == RoleTool {
		delete(w.open, m.ToolCallID)
	}
}

// Len is the number of calls still waiting.
func (w *PendingCalls) Len() int { return len(w.open) }

// Calls returns the waiting calls in the order they were issued.
func (w *PendingCalls) Calls() []ToolCall {
	out := make([]ToolCall, 0, len(w.open))
	for i, c := range w.order {
		if j, ok := w.open[c.ID]; ok && j == i {
			out = append(out, c)
		}
	}
	return out
}

// UnansweredCalls returns the tool calls of msgs that have no result after them, in order. After a restart
// these are the uncertain calls of SPEC U1.
func UnansweredCalls(msgs []Message) []ToolCall {
	w := NewPendingCalls()
	for i := range msgs {
		w.Observe(&msgs[i])
	}
	return w.Calls()
}

// Rewrite is a change to a session's effective transcript, applied atomically by the store (G4): the first
// Drop messages of the view are replaced by Insert (a checkpoint, injected context), the kept messages at
// the view positions in Replace are replaced by the given copies (reduced messages), and the messages of
// InsertAfter are placed right after the kept message at their position (a recovered result next to its
// call). Everything replaced stays in the full history, marked compacted.
type Rewrite struct {
	// BaseEpoch and BaseLen identify the view the rewrite was planned against; the store refuses a rewrite
	// whose base is no longer current.
	BaseEpoch   uint64
	BaseLen     int
	Drop        int
	Insert      []Message
	Replace     map[int]Message
	InsertAfter map[int][]Message
}

// Apply returns the transcript the rewrite produces from view, which must be the base view. It is the
// reference semantics the store implements.
func (r Rewrite) Apply(view []Message) []Message {
	out := make([]Message, 0, len(r.Insert)+len(view)-r.Drop)
	out = append(out, r.Insert...)
	for i := r.Drop; i < len(view); i++ {
		if m, ok := r.Replace[i]; ok {
			out = append(out, m)
		} else {
			out = append(out, view[i])
		}
		out = append(out, r.InsertAfter[i]...)
	}
	return out
}

// Then returns the single rewrite equivalent to applying r and then next (planned against r's result), so
// that a compaction and the reduction that follows it commit together. next must not replace what r inserted,
// and neither may use InsertAfter (it would shift positions); Then panics on that programming error.
func (r Rewrite) Then(next Rewrite) Rewrite {
	if len(r.InsertAfter) > 0 || len(next.InsertAfter) > 0 {
		panic("transcript: Rewrite.Then cannot compose rewrites that use InsertAfter")
	}
	out := Rewrite{BaseEpoch: r.BaseEpoch, BaseLen: r.BaseLen, Replace: map[int]Message{}}
	// Messages of next's base: r.Insert, then the original positions r.Drop.. (some replaced by r).
	origin := func(pos int) int { return pos - len(r.Insert) + r.Drop }
	dropped := next.Drop
	switch {
	case dropped <= len(r.Insert):
		out.Drop = r.Drop
		out.Insert = append(append([]Message{}, next.Insert...), r.Insert[dropped:]...)
	default:
		out.Drop = origin(dropped)
		out.Insert = append([]Message{}, next.Insert...)
	}
	for pos, m := range r.Replace {
		if pos >= out.Drop {
			out.Replace[pos] = m
		}
	}
	for pos, m := range next.Replace {
		if pos < len(r.Insert) {
			out.Insert[len(next.Insert)+pos-dropped] = m
			continue
		}
		out.Replace[origin(pos)] = m
	}
	return out
}
