package chat

import (
	"context"
	"encoding/json"
	"net"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/alisio-lsp/alisio-lsp/api"
)

// TestTurnEndsAfterItsEvents: the daemon sends a turn's events, then the prompt's result, over one JSON-RPC
// stream; handled in the order the chat receives them (as the terminal program does), every call of the turn is
// drawn with its result, none as stopped, however fast the turn was.
func TestTurnEndsAfterItsEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ours, theirs := net.Pipe()
	daemon := jsonrpc2.NewConn(jsonrpc2.NewStream(theirs))
	const calls = 20
	daemon.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		switch req.Method() {
		case "initialize":
			return reply(ctx, map[string]any{"capabilities": map[string]any{}}, nil)
		case "alisio/prompt":
			var p api.PromptParams
			_ = json.Unmarshal(req.Params(), &p)
			chars, ok := 5, false
			for i := range calls {
				id := "call_" + string(rune('a'+i))
				_ = daemon.Notify(ctx, "alisio/event", api.Event{Session: p.Session, Type: api.EventToolCall, ID: id, Name: "list_dir", Arguments: "{}"})
				_ = daemon.Notify(ctx, "alisio/event", api.Event{Session: p.Session, Type: api.EventToolResult, ID: id, Name: "list_dir", IsError: &ok, Chars: &chars})
			}
			return reply(ctx, api.PromptResult{Session: p.Session, Reply: "done"}, nil)
		}
		return reply(ctx, nil, nil)
	})
	defer daemon.Close()
	client, err := Connect(ctx, ours, t.TempDir(), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	m := newModel(ctx, client, Options{})
	m.resize(80, 30)
	m.session = "s1"
	// Run the turn as the program would: its command's message first, whatever arrives meanwhile after.
	if msg := m.prompt("look around")(); msg != nil {
		m.Update(msg)
	}
	for m.busy == "turn" {
		m.Update(incomingMsg{<-client.Incoming()})
	}
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
