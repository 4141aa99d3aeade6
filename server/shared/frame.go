package shared

import (
	"encoding/json"
)

// maxReply bounds a frame the forwarder reads from the daemon (a page of a long session can be large; the
// daemon caps what it accepts from the editor itself).
const maxReply = 256 << 20

// message is what the forwarder reads of a JSON-RPC message to follow the session.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

func peek(body []byte) message {
	var m message
	_ = json.Unmarshal(body, &m)
	return m
}

// isRequest: a method and an id; isResponse: an id and no method.
func (m message) isRequest() bool  { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }
func (m message) isResponse() bool { return m.Method == "" && len(m.ID) > 0 }
