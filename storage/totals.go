package storage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Totals are the running figures of a session that the context meter needs, kept in its head and updated in
// the transaction of every write, so that measuring a session reads one record however long it is.
type Totals struct {
	// Chars is the effective transcript's character count (transcript.TotalChars of the view).
	Chars int `json:"chars"`
	// LastPartial says the last checkpoint of the view is partial.
	LastPartial bool `json:"lastPartial,omitempty"`
	// Open are the IDs of the view's tool calls without a result (transcript.UnansweredCalls), in order.
	Open []string `json:"open,omitempty"`
	// Tokens are the tokens used over the whole history: prompt plus completion tokens of every stored message
	// with a reported usage, reduced copies (Truncated) excepted.
	Tokens int `json:"tokens"`
	// Usage sums the input of those same messages, with what the provider's prompt cache read and wrote of it
	// (nil while none reported a usage).
	Usage *UsageTotals `json:"usage,omitempty"`
	// Originals count what the user, the model and the tools wrote, as opposed to checkpoints and reduced
	// copies: nil in a head written before they were counted (the session's next read counts them).
	Originals *OriginalCounts `json:"originals,omitempty"`
}

// OriginalCounts count a session's original messages: those stored in its history, and those of them its
// view still sends.
type OriginalCounts struct {
	Stored int `json:"stored"`
	Sent   int `json:"sent"`
}

// CompactedOriginals is how many original messages compaction replaced: kept in the history, no longer sent;
// ok is false for totals counted before originals were.
func (t *Totals) CompactedOriginals() (n int, ok bool) {
	if t == nil || t.Originals == nil {
		return 0, false
	}
	return t.Originals.Stored - t.Originals.Sent, true
}

// CompactedMessages is how many of the user's, the model's and the tools' messages compaction replaced in the
// session (kept in its history); for a head listed before its originals were counted, every stored message no
// longer sent.
func (h Head) CompactedMessages() int {
	if n, ok := h.Totals.CompactedOriginals(); ok {
		return n
	}
	return int(h.NextSeq) - h.ViewLen
}

// isOriginal says m is what the user, the model or a tool wrote: neither a checkpoint nor a reduced copy.
func isOriginal(m *transcript.Message) bool { return !m.Summary && !m.Truncated }

// UsageTotals sum the input tokens the provider reported for stored replies: all of it, the part read from its
// prompt cache and the part written to it; Last is the last such reply's usage.
type UsageTotals struct {
	Input      int              `json:"input"`
	Cached     int              `json:"cached,omitempty"`
	CacheWrite int              `json:"cacheWrite,omitempty"`
	Last       transcript.Usage `json:"last"`
}

// add counts u, the usage of the reply stored after those already counted.
func (u *UsageTotals) add(m transcript.Usage) {
	u.Input += m.PromptTokens
	u.Cached += m.CachedTokens
	u.CacheWrite += m.CacheWriteTokens
	u.Last = m
}

// history is what of t belongs to the whole history rather than to the view: a rewrite of the view starts
// from it.
func (t Totals) history() Totals {
	h := Totals{Tokens: t.Tokens}
	if t.Usage != nil {
		u := *t.Usage
		h.Usage = &u
	}
	if t.Originals != nil {
		h.Originals = &OriginalCounts{Stored: t.Originals.Stored}
	}
	return h
}

// viewEntry is what a view position holds: the sequence of its message and, since format 2, what the totals
// need of that message, so that a rewrite recounts them from the entries it copies without reading a message.
//
// Encoding: the sequence (8 bytes, big endian), the char count (uvarint), a flags byte, then when entryResult
// is set the ID of the call answered, and when entryCalls is set the number of calls issued and their IDs
// (each string as a uvarint length and its bytes). A format-1 entry is the sequence alone.
type viewEntry struct {
	seq     uint64
	chars   int
	flags   byte
	callID  string   // the call a tool message answers (entryResult)
	callIDs []string // the calls the message issues (entryCalls)
}

// Flags of a view entry.
const (
	entrySummary byte = 1 << iota // a checkpoint
	entryPartial                  // a partial checkpoint
	entryResult                   // a tool message: it answers callID
	entryCalls                    // it issues tool calls
	entryCopy                     // a reduced copy (transcript.Message.Truncated)
)

// entryOf is the view entry of m stored at seq.
func entryOf(m *transcript.Message, seq uint64) viewEntry {
	e := viewEntry{seq: seq, chars: m.Chars()}
	if m.Summary {
		e.flags |= entrySummary
		if m.Partial {
			e.flags |= entryPartial
		}
	}
	if m.Role == transcript.RoleTool {
		e.flags |= entryResult
		e.callID = m.ToolCallID
	}
	if m.Truncated {
		e.flags |= entryCopy
	}
	if len(m.ToolCalls) > 0 {
		e.flags |= entryCalls
		e.callIDs = make([]string, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			e.callIDs[i] = c.ID
		}
	}
	return e
}

func (e *viewEntry) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), e.seq)
	b = binary.AppendUvarint(b, uint64(e.chars))
	b = append(b, e.flags)
	if e.flags&entryResult != 0 {
		b = appendString(b, e.callID)
	}
	if e.flags&entryCalls != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.callIDs)))
		for _, id := range e.callIDs {
			b = appendString(b, id)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// errUncounted: a format-1 view entry, which holds only the message's sequence.
var errUncounted = errors.New("view entry without the message's figures (format 1)")

// decodeEntry decodes a format-2 view entry.
func decodeEntry(v []byte) (viewEntry, error) {
	if len(v) == 8 {
		return viewEntry{seq: binary.BigEndian.Uint64(v)}, errUncounted
	}
	bad := func() (viewEntry, error) { return viewEntry{}, fmt.Errorf("malformed view entry (%d bytes)", len(v)) }
	if len(v) < 10 {
		return bad()
	}
	e := viewEntry{seq: binary.BigEndian.Uint64(v)}
	r := v[8:]
	chars, n := binary.Uvarint(r)
	if n <= 0 || n >= len(r) {
		return bad()
	}
	e.chars, e.flags, r = int(chars), r[n], r[n+1:]
	str := func() (string, bool) {
		l, n := binary.Uvarint(r)
		if n <= 0 || uint64(len(r)-n) < l {
			return "", false
		}
		s := string(r[n : n+int(l)])
		r = r[n+int(l):]
		return s, true
	}
	var ok bool
	if e.flags&entryResult != 0 {
		if e.callID, ok = str(); !ok {
			return bad()
		}
	}
	if e.flags&entryCalls != 0 {
		k, n := binary.Uvarint(r)
		if n <= 0 || k > uint64(len(r)) {
			return bad()
		}
		r = r[n:]
		e.callIDs = make([]string, k)
		for i := range e.callIDs {
			if e.callIDs[i], ok = str(); !ok {
				return bad()
			}
		}
	}
	if len(r) != 0 {
		return bad()
	}
	return e, nil
}

// tally keeps a session's totals up to date while a write stores messages and places entries in a view.
type tally struct {
	chars, tokens int
	lastPartial   bool
	pending       *transcript.PendingCalls
	usage         *UsageTotals
	originals     OriginalCounts
}

// newTally continues from t: the totals of the view the write extends (an append), or of an empty view over
// the same history (a rewrite builds its view anew: t.history()).
func newTally(t Totals) *tally {
	p := transcript.NewPendingCalls()
	if len(t.Open) > 0 {
		// A message issuing the open calls, in order, leaves the tracker exactly in that state.
		issue := transcript.Message{ToolCalls: make([]transcript.ToolCall, len(t.Open))}
		for i, id := range t.Open {
			issue.ToolCalls[i].ID = id
		}
		p.Observe(&issue)
	}
	out := &tally{chars: t.Chars, tokens: t.Tokens, lastPartial: t.LastPartial, pending: p}
	if t.Originals != nil {
		out.originals = *t.Originals
	}
	if t.Usage != nil {
		u := *t.Usage
		out.usage = &u
	}
	return out
}

// store counts a message added to the history.
func (t *tally) store(m *transcript.Message) {
	if isOriginal(m) {
		t.originals.Stored++
	}
	if m.Usage != nil && !m.Truncated {
		t.tokens += m.Usage.PromptTokens + m.Usage.CompletionTokens
		if t.usage == nil {
			t.usage = &UsageTotals{}
		}
		t.usage.add(*m.Usage)
	}
}

// place counts an entry placed at the end of the view.
func (t *tally) place(e *viewEntry) {
	t.chars += e.chars
	if e.flags&(entrySummary|entryCopy) == 0 {
		t.originals.Sent++
	}
	if e.flags&entrySummary != 0 {
		t.lastPartial = e.flags&entryPartial != 0
	}
	if e.flags&(entryResult|entryCalls) == 0 {
		return
	}
	m := transcript.Message{ToolCalls: make([]transcript.ToolCall, len(e.callIDs))}
	for i, id := range e.callIDs {
		m.ToolCalls[i].ID = id
	}
	if e.flags&entryResult != 0 {
		m.Role, m.ToolCallID = transcript.RoleTool, e.callID
	}
	t.pending.Observe(&m)
}

func (t *tally) totals() *Totals {
	originals := t.originals
	out := &Totals{Chars: t.chars, LastPartial: t.lastPartial, Tokens: t.tokens, Originals: &originals}
	if t.usage != nil {
		u := *t.usage
		out.Usage = &u
	}
	for _, c := range t.pending.Calls() {
		out.Open = append(out.Open, c.ID)
	}
	return out
}

// countTotals counts the totals of a session stored before they existed (format 1, or a head without
// Totals.Originals), once: it reads its history
// in one pass, rewrites the view's entries in place with their messages' figures (each entry stays valid
// whether rewritten or not, so a crash midway is harmless), and then writes its head with the totals. The
// caller holds the session's lock.
func (s *Store) countTotals(id string) (Session, error) {
	var (
		sess    Session
		counted bool
		entries []viewEntry
	)
	history := newTally(Totals{})
	err := s.db.View(func(txn *badger.Txn) (err error) {
		if sess, counted, err = getSession(txn, id); err != nil || counted {
			return err
		}
		seqs, err := viewSeqs(txn, id, sess.Head)
		if err != nil {
			return err
		}
		pos := make(map[uint64]int, len(seqs))
		for i, seq := range seqs {
			pos[seq] = i
		}
		entries = make([]viewEntry, len(seqs))
		err = eachStored(txn, id, sess.Head, func(seq uint64, v []byte) error {
			var m transcript.Message
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decoding message %d of session %s: %w", seq, id, err)
			}
			history.store(&m)
			if i, ok := pos[seq]; ok {
				entries[i] = entryOf(&m, seq)
				delete(pos, seq)
			}
			return nil
		})
		if err == nil && len(pos) > 0 {
			err = fmt.Errorf("session %s: %d messages of the transcript are missing from the history", id, len(pos))
		}
		return err
	})
	if err != nil || counted {
		if err == nil {
			s.remember(sess)
		}
		return sess, err
	}
	w := s.newChunkedWriter(history.totals().history())
	defer w.discard()
	for i := range entries {
		if err := w.place(viewKey(id, sess.Head.Epoch, i), &entries[i]); err != nil {
			return Session{}, fmt.Errorf("counting the totals of session %s: %w", id, err)
		}
	}
	if sess, err = w.commit(sess, true); err != nil {
		return Session{}, fmt.Errorf("counting the totals of session %s: %w", id, err)
	}
	return sess, nil
}

// VerifyTotals recounts the totals of session id from its stored transcript and history, by the definitions
// of Totals, and checks them, and each view entry's figures, against what the store keeps: nil when they
// agree. It reads the whole session; tests call it after every kind of write.
func (s *Store) VerifyTotals(id string) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	if _, err := s.session(id); err != nil { // counts a format-1 session first
		return err
	}
	return s.db.View(func(txn *badger.Txn) error {
		sess, _, err := getSession(txn, id)
		if err != nil {
			return err
		}
		var entries []viewEntry
		if err := eachViewEntry(txn, id, sess.Head, 0, sess.Head.ViewLen, func(pos int, v []byte) error {
			e, err := decodeEntry(v)
			if err != nil {
				return fmt.Errorf("session %s: view position %d: %w", id, pos, err)
			}
			entries = append(entries, e)
			return nil
		}); err != nil {
			return err
		}
		seqs := make([]uint64, len(entries))
		for i := range entries {
			seqs[i] = entries[i].seq
		}
		view, err := readMessages(txn, id, seqs)
		if err != nil {
			return err
		}
		for i := range view {
			if want := entryOf(&view[i], seqs[i]); !entries[i].equal(&want) {
				return fmt.Errorf("session %s: view position %d holds %+v; its message gives %+v", id, i, entries[i], want)
			}
		}
		want := Totals{Chars: transcript.TotalChars(view), Originals: &OriginalCounts{}}
		for i := range view {
			if isOriginal(&view[i]) {
				want.Originals.Sent++
			}
		}
		for i := len(view) - 1; i >= 0; i-- {
			if view[i].Summary {
				want.LastPartial = view[i].Partial
				break
			}
		}
		for _, c := range transcript.UnansweredCalls(view) {
			want.Open = append(want.Open, c.ID)
		}
		err = eachStored(txn, id, sess.Head, func(seq uint64, v []byte) error {
			var m transcript.Message
			if err := json.Unmarshal(v, &m); err != nil {
				return fmt.Errorf("decoding message %d of session %s: %w", seq, id, err)
			}
			if isOriginal(&m) {
				want.Originals.Stored++
			}
			if m.Usage != nil && !m.Truncated {
				want.Tokens += m.Usage.PromptTokens + m.Usage.CompletionTokens
				if want.Usage == nil {
					want.Usage = &UsageTotals{}
				}
				want.Usage.add(*m.Usage)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if got := sess.Head.Totals; got.Chars != want.Chars || got.LastPartial != want.LastPartial || got.Tokens != want.Tokens ||
			!slices.Equal(got.Open, want.Open) || !reflect.DeepEqual(got.Usage, want.Usage) ||
			!reflect.DeepEqual(got.Originals, want.Originals) {
			return fmt.Errorf("session %s: stored totals %+v; recounted %+v", id, *got, want)
		}
		return nil
	})
}

func (e *viewEntry) equal(o *viewEntry) bool {
	return e.seq == o.seq && e.chars == o.chars && e.flags == o.flags && e.callID == o.callID && slices.Equal(e.callIDs, o.callIDs)
}
