package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// DefaultMaxFrame is the largest message the daemon accepts (Content-Length), 64 MiB.
const DefaultMaxFrame = 64 << 20

// stream is a jsonrpc2.Stream with LSP framing that survives bad input: a frame whose body is not JSON-RPC,
// or one larger than the cap, is answered with an error response (id null) and skipped, instead of failing
// the connection as jsonrpc2's stream does. Writes are serialized.
type stream struct {
	in       *bufio.Reader
	out      io.Writer
	closer   io.Closer
	maxFrame int64
	wmu      sync.Mutex
	onBad    func(reason string)
}

func newStream(rwc io.ReadWriteCloser, maxFrame int64, onBad func(string)) *stream {
	if maxFrame <= 0 {
		maxFrame = DefaultMaxFrame
	}
	return &stream{in: bufio.NewReader(rwc), out: rwc, closer: rwc, maxFrame: maxFrame, onBad: onBad}
}

// errBadFrame marks a frame that was answered with an error and skipped.
var errBadFrame = errors.New("bad frame")

// Read returns the next valid message, answering and skipping bad ones. It fails only when the input ends or
// the framing cannot be recovered.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		msg, n, err := s.readOne()
		if errors.Is(err, errBadFrame) {
			continue
		}
		return msg, n, err
	}
}

func (s *stream) readOne() (jsonrpc2.Message, int64, error) {
	var total, length int64 = 0, -1
	problem := "missing Content-Length header"
	for {
		line, err := s.in.ReadString('\n')
		total += int64(len(line))
		if err != nil {
			return nil, total, fmt.Errorf("reading a header: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if total <= 2 {
				continue // a stray blank line between frames
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		switch {
		case !ok:
			problem = fmt.Sprintf("invalid header line %q", clip(line))
		case strings.EqualFold(strings.TrimSpace(name), "Content-Length"):
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n <= 0 {
				problem = fmt.Sprintf("invalid Content-Length %q", clip(value))
				continue
			}
			length = n
		}
	}
	if length < 0 {
		s.bad(jsonrpc2.ParseError, problem)
		return nil, total, errBadFrame
	}
	if length > s.maxFrame {
		if _, err := io.CopyN(io.Discard, s.in, length); err != nil {
			return nil, total, fmt.Errorf("skipping an oversized frame: %w", err)
		}
		s.bad(jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes is over the %d-byte limit", length, s.maxFrame))
		return nil, total + length, errBadFrame
	}
	data := make([]byte, length)
	if _, err := io.ReadFull(s.in, data); err != nil {
		return nil, total, fmt.Errorf("reading a frame body: %w", err)
	}
	total += length
	msg, err := jsonrpc2.DecodeMessage(data)
	if err != nil {
		code := jsonrpc2.ParseError
		if json.Valid(data) {
			code = jsonrpc2.InvalidRequest
		}
		s.bad(code, "not a JSON-RPC message: "+clip(err.Error()))
		return nil, total, errBadFrame
	}
	return msg, total, nil
}

// bad answers a frame that cannot be handled with an error response whose id is null.
func (s *stream) bad(code jsonrpc2.Code, message string) {
	if s.onBad != nil {
		s.onBad(message)
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	_ = s.writeRaw(body)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func (s *stream) writeRaw(body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if _, err := fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n", len(body)); err != nil {
		return err
	}
	_, err := s.out.Write(body)
	return err
}

// Write implements jsonrpc2.Stream.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("encoding a message: %w", err)
	}
	if err := s.writeRaw(body); err != nil {
		return 0, fmt.Errorf("writing a message: %w", err)
	}
	return int64(len(body)), nil
}

// Close implements jsonrpc2.Stream.
func (s *stream) Close() error { return s.closer.Close() }
