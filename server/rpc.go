package server

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/api"
	"go.lsp.dev/jsonrpc2"
)

// rpcError gives every error a proper JSON-RPC code; a failed request's error carries its api.ErrorData
// (kind and figures) and the sentence api.Explain makes in the editors' words: jsonrpc2 errors keep theirs, invalid params get
// -32602, anything else is a failed request (-32803) with its message.
func (s *Server) rpcError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je
	}
	var pe *paramsError
	if errors.As(err, &pe) {
		return &jsonrpc2.Error{Code: jsonrpc2.InvalidParams, Message: pe.Error()}
	}
	data, sentence := api.Explain(err, s.words())
	raw, _ := json.Marshal(data)
	msg := json.RawMessage(raw)
	return &jsonrpc2.Error{Code: codeRequestFailed, Message: sentence, Data: &msg}
}

// paramsError is a request whose params do not decode or lack a required field.
type paramsError struct{ msg string }

// Error is the message of the -32602 reply.
func (e *paramsError) Error() string { return "invalid params: " + e.msg }

// decode reads params into v, refusing unknown fields.
func decode(params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		params = []byte("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(params)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &paramsError{err.Error()}
	}
	return nil
}

func idKey(id jsonrpc2.ID) string {
	b, _ := json.Marshal(&id)
	return string(b)
}

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
}
