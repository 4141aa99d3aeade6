package chat

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"

	"go.lsp.dev/jsonrpc2"

	"github.com/alisio-lsp/alisio-lsp/api"
)

// scriptedTurn runs one turn of a chat 60 columns wide against a daemon that sends events for the prompt,
// then replies reply, and returns the chat once the turn ended.
func scriptedTurn(t *testing.T, events func(session string) []api.Event, reply string) *model {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ours, theirs := net.Pipe()
	daemon := jsonrpc2.NewConn(jsonrpc2.NewStream(theirs))
	daemon.Go(ctx, func(ctx context.Context, rep jsonrpc2.Replier, req jsonrpc2.Request) error {
		switch req.Method() {
		case "initialize":
			return rep(ctx, map[string]any{"capabilities": map[string]any{}}, nil)
		case "alisio/prompt":
			var p api.PromptParams
			_ = json.Unmarshal(req.Params(), &p)
			for _, e := range events(p.Session) {
				_ = daemon.Notify(ctx, "alisio/event", e)
			}
			return rep(ctx, api.PromptResult{Session: p.Session, Reply: reply}, nil)
		}
		return rep(ctx, nil, nil)
	})
	t.Cleanup(func() { _ = daemon.Close() })
	client, err := Connect(ctx, ours, t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	m := newModel(ctx, client, Options{})
	m.resize(60, 30)
	m.session = "s1"
	// Run the turn as the program would: its command's message first, whatever arrives meanwhile after.
	if msg := m.prompt("look around")(); msg != nil {
		m.Update(msg)
	}
	for m.busy == "turn" {
		m.Update(incomingMsg{<-client.Incoming()})
	}
	return m
}

// TestTurnEndsAfterItsEvents: the daemon sends a turn's events, then the prompt's result, over one JSON-RPC
// stream; handled in the order the chat receives them (as the terminal program does), every call of the turn is
// drawn with its result, none as stopped, however fast the turn was.
func TestTurnEndsAfterItsEvents(t *testing.T) {
	const calls = 20
	m := scriptedTurn(t, func(session string) []api.Event {
		chars, ok := 5, false
		var evs []api.Event
		for i := range calls {
			id := "call_" + string(rune('a'+i))
			evs = append(evs, api.Event{Session: session, Type: api.EventToolCall, ID: id, Name: "list_dir", Arguments: "{}"},
				api.Event{Session: session, Type: api.EventToolResult, ID: id, Name: "list_dir", IsError: &ok, Chars: &chars})
		}
		return evs
	}, "done")
	var drawn, stopped int
	for _, b := range m.blocks {
		for _, s := range b.turn {
			if s.call != nil {
				drawn++
				if s.call.stopped || !s.call.done {
					stopped++
				}
			}
		}
	}
	if drawn != calls || stopped != 0 {
		t.Fatalf("the turn drew %d of its %d calls, %d of them as stopped", drawn, calls, stopped)
	}
}

// TestReplyDrawnOnceAroundANote: a compaction that starts in the background while the reply streams puts its
// line inside the turn; the finished turn still shows the reply once (it was drawn twice), and the line wraps
// to the terminal's width rather than run past it.
func TestReplyDrawnOnceAroundANote(t *testing.T) {
	note := "compacting in the background: the earlier checkpoint and 10 messages after it are being summarized while you read"
	m := scriptedTurn(t, func(session string) []api.Event {
		return []api.Event{
			{Session: session, Type: api.EventDelta, Text: "The files are "},
			{Session: session, Type: "compaction_ahead_started", Summary: note},
			{Session: session, Type: api.EventDelta, Text: "read."},
		}
	}, "The files are read.")
	drawn := m.drawn
	if n := strings.Count(drawn, "The files"); n != 1 { // glamour styles each word: "The files" stays whole
		t.Errorf("the reply is drawn %d times:\n%s", n, drawn)
	}
	if !strings.Contains(drawn, "are being summarized") {
		t.Errorf("the note is not drawn:\n%s", drawn)
	}
	for _, l := range strings.Split(drawn, "\n") {
		if w := lipgloss.Width(l); w > 60 {
			t.Errorf("a line is %d cells wide in 60: %q", w, l)
		}
	}
}
