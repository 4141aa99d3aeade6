package server

import (
	"bufio"
	"bytes"
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

// stream is a jsonrpc2.Stream with LSP framing that survives bad input: a frame whose body is not JSON-RPC, one
// larger than the cap, one without Content-Length or one whose body was cut short is answered with an error
// response (id null) and skipped, and reading resumes at the next Content-Length header, instead of failing
// the connection (jsonrpc2's stream) or swallowing the requests that follow. Writes are serialized.
type stream struct {
	in *bufio.Reader
	// pushed holds input put back in front of the rest (unread); in reads from it first, so that skipping a
	// bad frame reuses in's buffer instead of stacking a new reader per skip.
	pushed   *pushback
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
	pushed := &pushback{src: rwc}
	return &stream{in: bufio.NewReaderSize(pushed, 64<<10), pushed: pushed, out: rwc, closer: rwc, maxFrame: maxFrame, onBad: onBad}
}

// pushback reads what was put back first, then its source.
type pushback struct {
	pending []byte
	src     io.Reader
}

func (p *pushback) Read(b []byte) (int, error) {
	if len(p.pending) > 0 {
		n := copy(b, p.pending)
		p.pending = p.pending[n:]
		return n, nil
	}
	return p.src.Read(b)
}

// errBadFrame marks a frame that was answered with an error and skipped.
var errBadFrame = errors.New("bad frame")

// maxHeaderLine bounds one header line; a longer one is garbage, and reading resumes at the next header.
const maxHeaderLine = 8 << 10

// Read returns the next valid message, answering and skipping bad ones. It fails only when the input ends.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		_, msg, n, err := s.readOne()
		if errors.Is(err, errBadFrame) {
			continue
		}
		return msg, n, err
	}
}

// readOne reads the next frame: its body and message, or errBadFrame once a bad one was answered.
func (s *stream) readOne() ([]byte, jsonrpc2.Message, int64, error) {
	length, total, problem, err := s.readHeader()
	if err != nil {
		return nil, nil, total, err
	}
	if problem != "" {
		// The header block had no usable length: its body, if any, cannot be told from what follows.
		s.bad(nil, jsonrpc2.ParseError, problem)
		return nil, nil, total, s.resync()
	}
	if length > s.maxFrame {
		// Refused without reading it (its id is read from its first bytes, when they have arrived already): the
		// bytes that follow are skipped up to the next header.
		head, _ := s.in.Peek(min(int(length), 4<<10, s.in.Buffered()))
		s.bad(leadingID(head), jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes is over the %d-byte limit", length, s.maxFrame))
		return nil, nil, total, s.resync()
	}
	data, err := s.readBody(int(length))
	total += int64(len(data))
	if err != nil {
		return nil, nil, total, err
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		if end, ok := overlongBody(data); ok {
			// A Content-Length larger than the message: the bytes after it are the start of the next frame's
			// header. Answer this request, and read that frame.
			s.unread(data[end:])
			s.bad(leadingID(data[:end]), jsonrpc2.InvalidRequest, fmt.Sprintf("Content-Length %d is larger than the message (%d bytes): nothing was run", length, end))
			return nil, nil, total, errBadFrame
		}
		if i := nextHeader(data); i >= 0 {
			// A body cut short: the next frame's header arrived inside it. Answer, and read that frame.
			s.unread(data[i:])
			s.bad(leadingID(data[:i]), jsonrpc2.ParseError, fmt.Sprintf("truncated message: %d of the %d bytes its Content-Length declared arrived before the next message", i, length))
			return nil, nil, total, errBadFrame
		}
		code := jsonrpc2.ParseError
		if json.Valid(data) {
			code = jsonrpc2.InvalidRequest // JSON, but not an object
		}
		s.bad(nil, code, "not a JSON-RPC message: "+clip(err.Error()))
		return nil, nil, total, errBadFrame
	}
	if problem := env.problem(); problem != "" {
		s.bad(env.answerID(), jsonrpc2.InvalidRequest, problem+" (nothing was run)")
		return nil, nil, total, errBadFrame
	}
	msg, err := jsonrpc2.DecodeMessage(data)
	if err != nil {
		s.bad(env.answerID(), jsonrpc2.InvalidRequest, "not a JSON-RPC message: "+clip(err.Error())+" (nothing was run)")
		return nil, nil, total, errBadFrame
	}
	return data, msg, total, nil
}

// envelope is what the daemon checks of every message before jsonrpc2 decodes it.
type envelope struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// problem says what makes the message invalid JSON-RPC 2.0, or "".
func (e envelope) problem() string {
	switch {
	case e.Version != "2.0":
		return fmt.Sprintf(`"jsonrpc" must be "2.0" (it is %q)`, e.Version)
	case e.Method != nil && string(e.ID) == "null":
		return `request with "id": null: give the request a number or string id`
	case e.Method == nil && e.ID != nil && e.Result == nil && e.Error == nil:
		return `message with an id but no "method": a request needs a method (and a response a "result" or an "error")`
	case e.ID != nil && !validID(e.ID):
		return fmt.Sprintf("invalid id %s: use a whole number or a string", clip(string(e.ID)))
	}
	return ""
}

// answerID is the id to answer a bad message with: its own when it is a request's, else null.
func (e envelope) answerID() json.RawMessage {
	if e.Method == nil && (e.Result != nil || e.Error != nil) {
		return nil // a response is never answered
	}
	return e.ID
}

// validID reports an id jsonrpc2 accepts: a string or a whole number.
func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string:
		return true
	case float64:
		_, err := strconv.ParseInt(string(id), 10, 64)
		return err == nil
	}
	return false
}

// leadingID reads the id of a message from its first bytes (a message too large or cut short), when the id
// comes before anything that does not fit in them; else it returns nil.
func leadingID(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil
		}
		if key == "id" && (value[0] == '"' || value[0] == '-' || value[0] >= '0' && value[0] <= '9') {
			return value
		}
	}
	return nil
}

// FrameReader reads a client's LSP frames the way the daemon does: a bad frame (no Content-Length, over the
// size limit, cut short, not JSON-RPC, id null) is answered on the client's output with an error response and
// skipped, and reading resumes at the next frame. The shared daemon's forwarder reads the editor with it.
type FrameReader struct{ s *stream }

// NewFrameReader reads from r and answers bad frames on w (each answer is one Write call); maxFrame 0 is
// DefaultMaxFrame.
func NewFrameReader(r io.Reader, w io.Writer, maxFrame int64) *FrameReader {
	return &FrameReader{newStream(readWriter{r, w}, maxFrame, nil)}
}

// Next returns the body of the next valid message; it fails only when the input ends.
func (f *FrameReader) Next() ([]byte, error) {
	for {
		body, _, _, err := f.s.readOne()
		if !errors.Is(err, errBadFrame) {
			return body, err
		}
	}
}

type readWriter struct {
	io.Reader
	io.Writer
}

func (readWriter) Close() error { return nil }

// readHeader reads one header block. problem is set, and length is -1, when the block has no valid
// Content-Length. A header line with garbage before "Content-Length:" (the rest of a skipped body) is read
// from the header on.
func (s *stream) readHeader() (length, total int64, problem string, err error) {
	length = -1
	problem = "missing Content-Length header"
	lines := 0
	for {
		line, err := s.readLine()
		total += int64(len(line))
		if err != nil {
			return -1, total, "", fmt.Errorf("reading a header: %w", err)
		}
		if i := headerIndex(line); i > 0 {
			line = line[i:]
		}
		text := strings.TrimSpace(string(line))
		if text == "" {
			if lines == 0 {
				continue // a stray blank line between frames
			}
			break
		}
		lines++
		name, value, ok := strings.Cut(text, ":")
		switch {
		case !ok || len(line) > maxHeaderLine:
			problem = fmt.Sprintf("invalid header line %q", clip(text))
		case strings.EqualFold(strings.TrimSpace(name), "Content-Length"):
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n <= 0 {
				problem = fmt.Sprintf("invalid Content-Length %q", clip(value))
				length = -1
				continue
			}
			length = n
		}
	}
	if length >= 0 {
		problem = ""
	}
	return length, total, problem, nil
}

// readLine reads up to a newline, keeping at most maxHeaderLine bytes of a longer line (the rest is dropped,
// except a Content-Length header near its end).
func (s *stream) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > 2*maxHeaderLine {
			line = append(line[:0], line[len(line)-maxHeaderLine:]...)
		}
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// readBody reads length bytes; when a Content-Length header shows up in them the body was cut short, and it
// stops there without waiting for the rest.
func (s *stream) readBody(length int) ([]byte, error) {
	data := make([]byte, 0, min(length, 1<<20))
	for len(data) < length {
		want := min(length-len(data), 64<<10)
		from := len(data)
		data = append(data, make([]byte, want)...)
		n, err := s.in.Read(data[from:])
		data = data[:from+n]
		if nextHeader(data[max(0, from-len(contentLength)-24):]) >= 0 {
			return data, nil
		}
		if err != nil {
			return data, fmt.Errorf("reading a frame body: %w", err)
		}
	}
	return data, nil
}

// resync skips input up to the next Content-Length header.
func (s *stream) resync() error {
	var carry []byte
	for {
		chunk, err := s.in.ReadSlice('\n')
		buf := append(carry, chunk...)
		if i := headerIndex(buf); i >= 0 {
			s.unread(buf[i:])
			return errBadFrame
		}
		carry = append([]byte(nil), buf[max(0, len(buf)-len(contentLength)):]...)
		if err != nil && err != bufio.ErrBufferFull {
			return fmt.Errorf("skipping to the next message: %w", err)
		}
	}
}

// unread puts b back in front of the input (ahead of what in had buffered), keeping in and its buffer.
func (s *stream) unread(b []byte) {
	buffered, _ := s.in.Peek(s.in.Buffered())
	pending := make([]byte, 0, len(b)+len(buffered)+len(s.pushed.pending))
	pending = append(append(append(pending, b...), buffered...), s.pushed.pending...)
	s.pushed.pending = pending
	s.in.Reset(s.pushed)
}

// overlongBody reports whether data is one whole JSON object followed only by the start of a header line
// ("Content-Length: 12" cut anywhere): a frame whose Content-Length counted some bytes of the next frame.
// end is where the object ends.
func overlongBody(data []byte) (end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj json.RawMessage
	if err := dec.Decode(&obj); err != nil || len(obj) == 0 || obj[0] != '{' {
		return 0, false
	}
	end = int(dec.InputOffset())
	rest := bytes.TrimLeft(data[end:], " \t\r\n")
	if len(rest) == 0 {
		return 0, false
	}
	end = len(data) - len(rest)
	lower := bytes.ToLower(rest)
	if len(lower) <= len(contentLength) {
		return end, strings.HasPrefix(contentLength, string(lower))
	}
	if !bytes.HasPrefix(lower, []byte(contentLength)) {
		return 0, false
	}
	digits := bytes.TrimLeft(lower[len(contentLength):], " ")
	return end, len(bytes.Trim(digits, "0123456789\r\n")) == 0
}

const contentLength = "content-length:"

// headerIndex is the position of "Content-Length:" (any case) in b, or -1.
func headerIndex(b []byte) int {
	return bytes.Index(bytes.ToLower(b), []byte(contentLength))
}

// nextHeader finds a complete Content-Length header line ("Content-Length: N" then CR LF) in b, which cannot
// occur in a valid JSON body: raw line breaks are only allowed between JSON tokens, and that text is not one.
func nextHeader(b []byte) int {
	for off := 0; ; {
		i := headerIndex(b[off:])
		if i < 0 {
			return -1
		}
		i += off
		rest := b[i+len(contentLength):]
		j := 0
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		k := j
		for k < len(rest) && rest[k] >= '0' && rest[k] <= '9' {
			k++
		}
		if k > j && k+1 < len(rest) && rest[k] == '\r' && rest[k+1] == '\n' {
			return i
		}
		off = i + 1
	}
}

// bad answers a frame that cannot be handled with an error response: with the request's id when it could be
// read (nil: null), so that the client's own request gets its answer.
func (s *stream) bad(id json.RawMessage, code jsonrpc2.Code, message string) {
	if s.onBad != nil {
		s.onBad(message)
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	_ = s.writeRaw(body)
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// writeRaw writes one frame in one Write call, so that a writer shared with others (the forwarder's) never
// interleaves two frames.
func (s *stream) writeRaw(body []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return WriteFrame(s.out, body)
}

// WriteFrame writes body as one LSP frame, in one Write call, so that frames written to a shared writer never
// interleave.
func WriteFrame(w io.Writer, body []byte) error {
	frame := append([]byte(fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body))), body...)
	_, err := w.Write(frame)
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
