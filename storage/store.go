// Package storage persists alisio sessions in an embedded Badger database.
//
// Layout of the keys (all under one Badger directory):
//
//	format                         store format version (decimal text)
//	s/<session>                    the session record: title, workspace, instructions… (written once)
//	t/<session>                    its head: epoch, next sequence, view length, update time and totals
//	h/<session>/<seq:8>            every message ever stored, immutable, in order of storage
//	v/<session>/<epoch:8><pos:8>   the effective transcript of an epoch: position → message sequence and the
//	                               message's figures for the totals (see viewEntry)
//
// The head is the single source of truth: history entries at or past its next sequence and view entries of
// another epoch or past its view length are invisible. An append writes its messages, their view entries and
// the head in one transaction. A rewrite (compaction or reduction) stages its new messages and a whole new view
// in as many transactions as Badger needs, then flips the head in one small write, so after a crash the session
// is entirely before or entirely after it (SPEC G4) whatever its size.
//
// Format 1 kept the head inside the session record, without totals, and view entries held the sequence alone.
// Such a session is read as it is; the first time its record is needed with its totals (Session, Transcript,
// any write) they are counted once and its head is written (countTotals).
package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/dgraph-io/badger/v4"
	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// FormatVersion is the store format this binary writes; it reads every earlier one. Opening an older store
// marks it with this version, so that an older binary refuses it instead of misreading it.
const FormatVersion = 2

// Errors a caller acts on.
var (
	// ErrNotFound: no session with that ID.
	ErrNotFound = errors.New("session not found")
	// ErrStale: a rewrite was planned against a view that is no longer current; plan again.
	ErrStale = errors.New("session changed since the rewrite was planned")
	// ErrLocked: another process holds the store.
	ErrLocked = errors.New("session store is locked by another process")
	// ErrNoMemory: no memory with that ID in the workspace.
	ErrNoMemory = errors.New("no memory")
	// ErrFormatTooNew: the store was written by a newer alisio-lsp.
	ErrFormatTooNew = errors.New("session store format is newer than this binary")
)

// Options configure a Store. Build them with DefaultOptions and the WithX methods.
type Options struct {
	// Dir is the Badger directory. Required.
	Dir string
	// SyncWrites makes every commit fsync before it returns, so an acknowledged message survives a power
	// loss, not only a crash of the process. Default true.
	SyncWrites bool
	// Logger receives Badger's own messages (at debug level, warnings at warn). Default: a no-op logger.
	Logger *zap.Logger
	// MinFreeBytes is the free disk space the store keeps in reserve: Open and every write refuse with
	// ErrDiskFull below it (plus the write's size) instead of letting Badger crash on a full disk.
	// Default DefaultMinFreeBytes; 0 disables the check.
	MinFreeBytes uint64
}

// DefaultOptions returns the options for a store in dir.
func DefaultOptions(dir string) Options {
	return Options{Dir: dir, SyncWrites: true, Logger: zap.NewNop(), MinFreeBytes: DefaultMinFreeBytes}
}

// WithMinFreeBytes sets MinFreeBytes (default DefaultMinFreeBytes).
func (o Options) WithMinFreeBytes(n uint64) Options { o.MinFreeBytes = n; return o }

// WithSyncWrites sets SyncWrites (default true).
func (o Options) WithSyncWrites(v bool) Options { o.SyncWrites = v; return o }

// WithLogger sets Logger (default no-op).
func (o Options) WithLogger(l *zap.Logger) Options { o.Logger = l; return o }

// Session is the record of one conversation.
type Session struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	Workspace string `json:"workspace"`
	Model     string `json:"model,omitempty"`
	// Instructions are the session's own fixed instructions (an imported system prompt); they are sent with
	// every request, measured as instructions, and never summarized.
	Instructions []string  `json:"instructions,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	Head         Head      `json:"head"`
}

// Head says which stored entries make up the session now.
type Head struct {
	// Epoch numbers the current view; each rewrite starts a new one.
	Epoch uint64 `json:"epoch"`
	// NextSeq is the sequence the next stored message gets; entries at or past it are not part of the session.
	NextSeq uint64 `json:"nextSeq"`
	// ViewLen is the number of messages in the effective transcript.
	ViewLen int `json:"viewLen"`
	// Totals are the session's running figures. Every record Session, Transcript and the writes return has
	// them; in the list of Sessions they are nil for a session stored before format 2 and not counted since.
	Totals *Totals `json:"totals,omitempty"`
}

// metaJSON encodes the session key since format 2: the record without its head and update time, which the
// head key holds (the outer fields hide the embedded ones and are omitted).
type metaJSON struct {
	*Session
	UpdatedAt *struct{} `json:"updatedAt,omitempty"`
	Head      *struct{} `json:"head,omitempty"`
}

// headJSON encodes the head key.
type headJSON struct {
	Head
	UpdatedAt time.Time `json:"updatedAt"`
}

// View is a session's effective transcript: what the model gets next.
type View struct {
	Session  Session
	Messages []transcript.Message
}

// Store is an open session store. It is safe for concurrent use by one process; Badger's directory lock keeps
// other processes out.
type Store struct {
	db  *badger.DB
	dir string
	// dirFile is the store's directory, kept open to ask its free space (haveSpace).
	dirFile *os.File
	// reserve is Options.MinFreeBytes.
	reserve uint64

	// gate lets Close wait for the operations under way and refuse later ones (ErrClosed) instead of letting
	// them reach a closed Badger, which crashes the process.
	gate   sync.RWMutex
	closed bool

	mu      sync.Mutex
	locks   map[string]*sync.Mutex
	records map[string]Session // session records with their totals, as last committed (see loadSession)
}

// Open opens (creating if needed) the store described by opts.
func Open(opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	bopts := badgerOptions(opts)
	if opts.Dir == "" {
		return nil, errors.New("the session store needs a directory")
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating session store directory %s: %w", opts.Dir, err)
	}
	if err := checkSpace(opts.Dir, opts.MinFreeBytes, 0); err != nil {
		return nil, fmt.Errorf("opening session store: %w", err)
	}
	removeEmptyMemtables(opts.Dir, opts.Logger)
	db, err := badger.Open(bopts)
	if err != nil && strings.Contains(err.Error(), "Create a new file") {
		// Badger issue #2207: an empty .vlog left by a crash between creating the file and its first write
		// fails the first Open after it has been sized; the second Open succeeds.
		opts.Logger.Warn("retrying to open the session store after a crash left an empty log file", zap.String("dir", opts.Dir))
		db, err = badger.Open(bopts)
	}
	if err != nil {
		// "Cannot acquire directory lock" on Unix, "Another process is using this Badger database" on Windows.
		if msg := err.Error(); strings.Contains(msg, "Cannot acquire directory lock") || strings.Contains(msg, "Another process is using") {
			return nil, lockedError(opts.Dir)
		}
		return nil, fmt.Errorf("opening session store %s: %w", opts.Dir, err)
	}
	makePrivate(opts.Dir)
	dirFile, err := os.Open(opts.Dir)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening session store directory %s: %w", opts.Dir, err)
	}
	s := &Store{db: db, dir: opts.Dir, dirFile: dirFile, reserve: opts.MinFreeBytes, locks: map[string]*sync.Mutex{}, records: map[string]Session{}}
	if err := s.checkFormat(); err != nil {
		_ = db.Close()
		_ = dirFile.Close()
		return nil, err
	}
	return s, nil
}

// memTableSize is the size of Badger's memtables. Badger builds each flushed memtable into a table in memory
// and keeps its builders' buffers in a pool, so this size sets most of what a store holds after heavy writes:
// at 8 MB rather than 16 MB a 145 MB import peaks 60–100 MB lower and an idle daemon with ten 10k-message
// sessions holds half the heap (99 against 207 MiB), for 5–15 % more time to open a 100k view. It cannot go
// lower while the value threshold is Badger's 1 MB: a transaction may hold 15 % of a memtable.
const memTableSize = 8 << 20

// badgerOptions are the Badger settings of a store described by opts.
func badgerOptions(opts Options) badger.Options {
	return badger.DefaultOptions(opts.Dir).
		WithSyncWrites(opts.SyncWrites).
		WithLogger(badgerLogger{opts.Logger.Sugar()}).
		WithMemTableSize(memTableSize).
		WithBlockCacheSize(32 << 20).
		WithValueLogFileSize(256 << 20)
}

// removeEmptyMemtables deletes 0-byte memtable files, which a crash between creating a memtable file and
// sizing it leaves behind; they hold no data, and Badger refuses to open with them (badger issue #2207).
func removeEmptyMemtables(dir string, log *zap.Logger) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".mem") {
			continue
		}
		if info, err := e.Info(); err == nil && info.Size() == 0 {
			path := filepath.Join(dir, e.Name())
			if os.Remove(path) == nil {
				log.Warn("removed an empty memtable file left by a crash", zap.String("file", path))
			}
		}
	}
}

// makePrivate sets every file of the store to 0600. Badger's mapped files (.sst, .vlog, .mem) are created
// 0644 less the umask by a dependency that takes no mode; the store's directory (0700) keeps them private
// from the moment they exist, and this pass, at open and close, gives them the same mode as the rest.
func makePrivate(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && info.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(filepath.Join(dir, e.Name()), 0o600)
		}
	}
}

func lockedError(dir string) error {
	holder := "another process"
	if b, err := os.ReadFile(filepath.Join(dir, "LOCK")); err == nil {
		if pid := strings.TrimSpace(string(b)); pid != "" {
			holder = "process " + pid
		}
	}
	return fmt.Errorf("%w: %s holds %s; stop that alisio-lsp (daemon or CLI) first",
		ErrLocked, holder, dir)
}

func (s *Store) checkFormat() error {
	return s.db.Update(func(txn *badger.Txn) error {
		item, err := txn.Get(formatKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return txn.Set(formatKey, []byte(strconv.Itoa(FormatVersion)))
		}
		if err != nil {
			return fmt.Errorf("reading store format: %w", err)
		}
		raw, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("reading store format: %w", err)
		}
		v, err := strconv.Atoi(string(raw))
		if err != nil {
			return fmt.Errorf("session store %s has an unreadable format version %q", s.dir, raw)
		}
		if v > FormatVersion {
			return fmt.Errorf("%w: %s has format %d, this binary knows up to %d; upgrade alisio-lsp",
				ErrFormatTooNew, s.dir, v, FormatVersion)
		}
		if v < FormatVersion {
			return txn.Set(formatKey, []byte(strconv.Itoa(FormatVersion)))
		}
		return nil
	})
}

// ErrClosed is returned by every operation started after Close.
var ErrClosed = errors.New("the session store is closed (alisio-lsp is shutting down)")

// enter holds the store open for one operation; the caller runs the returned release when done.
func (s *Store) enter() (release func(), err error) {
	s.gate.RLock()
	if s.closed {
		s.gate.RUnlock()
		return nil, ErrClosed
	}
	return s.gate.RUnlock, nil
}

// Close waits for the operations under way, closes the store and releases its directory lock. Later calls of
// any method return ErrClosed; closing twice is harmless. On a disk too full to write the store's last table
// it leaves Badger open (the directory lock is released when the process ends) and returns ErrDiskFull: the
// journal holds every write and is read at the next open.
func (s *Store) Close() error {
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	defer makePrivate(s.dir)
	defer s.dirFile.Close()
	if err := s.roomToClose(); err != nil {
		// Badger's last table would be written through a mapping the disk cannot back, which kills the
		// process (SIGBUS). Left open, the store is read back at the next start from its journal, which
		// every write already synced: nothing is lost. The directory lock goes with the process.
		return err
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing session store: %w", err)
	}
	return nil
}

// Dir is the directory of the store.
func (s *Store) Dir() string { return s.dir }

var formatKey = []byte("format")

func sessionKey(id string) []byte { return []byte("s/" + id) }

func headKey(id string) []byte { return []byte("t/" + id) }

func historyPrefix(id string) []byte { return []byte("h/" + id + "/") }

func historyKey(id string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(historyPrefix(id), seq)
}

func viewSessionPrefix(id string) []byte { return []byte("v/" + id + "/") }

func viewPrefix(id string, epoch uint64) []byte {
	return binary.BigEndian.AppendUint64(viewSessionPrefix(id), epoch)
}

func viewKey(id string, epoch uint64, pos int) []byte {
	return binary.BigEndian.AppendUint64(viewPrefix(id, epoch), uint64(pos))
}

// sessionLock serializes writers of one session inside this process.
func (s *Store) sessionLock(id string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.locks[id]
	if !ok {
		l = &sync.Mutex{}
		s.locks[id] = l
	}
	return l
}

func validID(id string) error {
	if id == "" || strings.ContainsAny(id, "/\x00") {
		return fmt.Errorf("invalid session ID %q", id)
	}
	return nil
}

// getSession reads the record of session id with its head; counted is false for a session whose totals were
// not counted yet: one stored before format 2 (its head is then the one inside its record, without totals), or
// whose head predates the count of originals (Totals.Originals).
func getSession(txn *badger.Txn, id string) (sess Session, counted bool, err error) {
	item, err := txn.Get(sessionKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return sess, false, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return sess, false, fmt.Errorf("reading session %s: %w", id, err)
	}
	if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &sess) }); err != nil {
		return sess, false, fmt.Errorf("decoding session %s: %w", id, err)
	}
	sess.Title = CleanTitle(sess.Title) // also for titles stored before they were cleaned
	counted, err = readHead(txn, &sess)
	return sess, counted, err
}

// readHead sets the head and update time of sess from its head key, when it has one (since format 2).
func readHead(txn *badger.Txn, sess *Session) (bool, error) {
	item, err := txn.Get(headKey(sess.ID))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the head of session %s: %w", sess.ID, err)
	}
	var h headJSON
	if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &h) }); err != nil {
		return false, fmt.Errorf("decoding the head of session %s: %w", sess.ID, err)
	}
	if h.Totals == nil {
		return false, fmt.Errorf("the head of session %s has no totals", sess.ID)
	}
	sess.Head, sess.UpdatedAt = h.Head, h.UpdatedAt
	// A head written before originals were counted: its other totals stand, and the next read counts them all.
	return h.Totals.Originals != nil, nil
}

// Session returns the record of session id, with its totals: reading it costs one record, however long the
// session is (the first read of a session stored before format 2 counts them once).
func (s *Store) Session(id string) (Session, error) {
	release, err := s.enter()
	if err != nil {
		return Session{}, err
	}
	defer release()
	return s.countedSession(id)
}

// countedSession is Session inside an operation, for a caller that does not hold the session's lock.
func (s *Store) countedSession(id string) (Session, error) {
	sess, counted, err := s.loadSession(id)
	if err != nil || counted {
		return sess, err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	return s.countTotals(id)
}

// session is Session for a caller that holds the session's lock.
func (s *Store) session(id string) (Session, error) {
	sess, counted, err := s.loadSession(id)
	if err != nil || counted {
		return sess, err
	}
	return s.countTotals(id)
}

// loadSession returns the record of session id as committed, and whether its totals are counted. Counted
// records are cached: this process is the only writer of the store (Badger's directory lock), and every
// commit refreshes its cache entry, so an append does not read the record back before writing it.
func (s *Store) loadSession(id string) (Session, bool, error) {
	if err := validID(id); err != nil {
		return Session{}, false, err
	}
	s.mu.Lock()
	sess, ok := s.records[id]
	s.mu.Unlock()
	if ok {
		return sess, true, nil
	}
	var counted bool
	err := s.db.View(func(txn *badger.Txn) (err error) {
		sess, counted, err = getSession(txn, id)
		return err
	})
	if err == nil && counted {
		// A commit that raced with this read has cached a newer record: keep that one.
		s.mu.Lock()
		if _, ok := s.records[id]; !ok {
			s.records[id] = sess
		}
		s.mu.Unlock()
	}
	return sess, counted, err
}

// remember caches a session record as committed; forget drops it (deleted, or its commit failed).
func (s *Store) remember(sess Session) {
	s.mu.Lock()
	s.records[sess.ID] = sess
	s.mu.Unlock()
}

func (s *Store) forget(id string) {
	s.mu.Lock()
	delete(s.records, id)
	s.mu.Unlock()
}

// Sessions lists the sessions of workspace (all sessions when workspace is empty), most recently updated first.
func (s *Store) Sessions(workspace string) ([]Session, error) {
	release, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer release()
	var out []Session
	err = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("s/"), PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			var sess Session
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &sess) }); err != nil {
				return fmt.Errorf("decoding session %s: %w", it.Item().Key(), err)
			}
			if workspace != "" && sess.Workspace != workspace {
				continue
			}
			sess.Title = CleanTitle(sess.Title) // also for titles stored before they were cleaned
			if _, err := readHead(txn, &sess); err != nil {
				return err
			}
			out = append(out, sess)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	sortSessions(out)
	return out, nil
}

// CleanTitle makes a session title one line of printable text: runs of white space (newlines included)
// become one space and control characters (terminal escapes) are dropped.
func CleanTitle(title string) string {
	title = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, title)
	return strings.Join(strings.Fields(title), " ")
}

func sortSessions(ss []Session) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].UpdatedAt.After(ss[j-1].UpdatedAt); j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

// CreateSession stores a new session holding msgs as its transcript and returns its record. Large sessions are
// written in several transactions but become visible only with the final one: a crash leaves no session.
func (s *Store) CreateSession(meta Session, msgs []transcript.Message) (Session, error) {
	return s.CreateSessionFrom(meta, func(_ *Session, add func(...transcript.Message) error) error {
		return add(msgs...)
	})
}

// createSpaceCheck is how many bytes of messages CreateSessionFrom stages between two checks of free space.
const createSpaceCheck = 16 << 20

// CreateSessionFrom is CreateSession for a transcript read as it is stored (an import): fill passes the
// messages to add, in order and in as many calls as it likes, and may set the record's title, workspace and
// instructions as it learns them (not its ID). The session becomes visible only with the final commit,
// after fill returns nil; when fill or a write fails there is no session and what was staged is removed
// (a crash leaves it invisible).
func (s *Store) CreateSessionFrom(meta Session, fill func(meta *Session, add func(...transcript.Message) error) error) (Session, error) {
	release, err := s.enter()
	if err != nil {
		return Session{}, err
	}
	defer release()
	if err := s.haveSpace(0); err != nil {
		return Session{}, err
	}
	now := time.Now().UTC()
	if meta.ID == "" {
		meta.ID = transcript.NewID()
	}
	id := meta.ID
	if err := validID(id); err != nil {
		return Session{}, err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	err = s.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(sessionKey(id))
		if err == nil {
			return fmt.Errorf("session %s already exists", id)
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("checking session %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return Session{}, err
	}
	w := s.newChunkedWriter(Totals{})
	defer w.discard()
	var head Head
	unchecked := 0 // bytes staged since the last check of free space
	add := func(msgs ...transcript.Message) error {
		if unchecked += approxBytes(msgs); unchecked > createSpaceCheck {
			if err := s.haveSpace(unchecked); err != nil {
				return err
			}
			unchecked = 0
		}
		next, _, err := w.stage(id, head, head.Epoch, head.ViewLen, msgs, now)
		head = next
		return err
	}
	err = fill(&meta, add)
	if err == nil {
		err = s.haveSpace(unchecked)
	}
	var sess Session
	if err == nil {
		meta.ID, meta.Title, meta.CreatedAt, meta.UpdatedAt, meta.Head = id, CleanTitle(meta.Title), now, now, head
		sess, err = w.commit(meta, true)
	}
	if err != nil {
		// Earlier transactions may have committed staged entries: invisible without the record, removed here.
		w.discard()
		s.dropPrefix(historyPrefix(id))
		s.dropPrefix(viewSessionPrefix(id))
		return Session{}, err
	}
	return sess, nil
}

// Append stores msgs at the end of the session's transcript and returns them with their IDs and times set.
// When Append returns nil the messages are durable (they survive kill -9; with SyncWrites, power loss too).
func (s *Store) Append(id string, msgs ...transcript.Message) ([]transcript.Message, error) {
	release, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer release()
	if err := s.haveSpace(approxBytes(msgs)); err != nil {
		return nil, err
	}
	if err := validID(id); err != nil {
		return nil, err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	sess, err := s.session(id)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	w := s.newChunkedWriter(*sess.Head.Totals)
	defer w.discard()
	head, stored, err := w.stage(id, sess.Head, sess.Head.Epoch, sess.Head.ViewLen, msgs, now)
	if err != nil {
		return nil, err
	}
	sess.Head, sess.UpdatedAt = head, now
	if _, err := w.commit(sess, false); err != nil {
		return nil, err
	}
	return stored, nil
}

// Transcript reads the effective transcript of session id. It reads only the current view, never the compacted
// history, so its cost depends on the transcript's length, not the session's.
func (s *Store) Transcript(id string) (View, error) {
	release, err := s.enter()
	if err != nil {
		return View{}, err
	}
	defer release()
	if _, err := s.countedSession(id); err != nil {
		return View{}, err
	}
	var v View
	err = s.db.View(func(txn *badger.Txn) error {
		sess, _, err := getSession(txn, id)
		if err != nil {
			return err
		}
		v.Session = sess
		seqs, err := viewSeqs(txn, id, sess.Head)
		if err != nil {
			return err
		}
		v.Messages, err = readMessages(txn, id, seqs)
		return err
	})
	return v, err
}

// History reads every stored message of session id in storage order, with Compacted set on those no longer in
// the effective transcript: the page of the whole history.
func (s *Store) History(id string) ([]transcript.Message, error) {
	p, err := s.ReadPage(id, true, 0, 0)
	return p.Messages, err
}

// eachStored calls fn with the sequence and the stored JSON of every message of the session's history, in
// order of storage.
func eachStored(txn *badger.Txn, id string, head Head, fn func(seq uint64, v []byte) error) error {
	prefix := historyPrefix(id)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 256})
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		seq := binary.BigEndian.Uint64(it.Item().Key()[len(prefix):])
		if seq >= head.NextSeq {
			break
		}
		if err := it.Item().Value(func(v []byte) error { return fn(seq, v) }); err != nil {
			return err
		}
	}
	return nil
}

// Read returns the effective transcript of session id and the messages to show: the transcript itself, or
// with includeCompacted the full history.
func (s *Store) Read(id string, includeCompacted bool) (View, []transcript.Message, error) {
	v, err := s.Transcript(id)
	if err != nil || !includeCompacted {
		return v, v.Messages, err
	}
	h, err := s.History(id)
	return v, h, err
}

// Apply commits rw atomically: after a crash at any point the session is entirely before or entirely after it.
// It returns ErrStale when the session changed since rw was planned.
func (s *Store) Apply(id string, rw transcript.Rewrite) (Session, error) {
	release, err := s.enter()
	if err != nil {
		return Session{}, err
	}
	defer release()
	need := approxBytes(rw.Insert)
	for _, m := range rw.Replace {
		need += approxBytes([]transcript.Message{m})
	}
	for _, ms := range rw.InsertAfter {
		need += approxBytes(ms)
	}
	if err := s.haveSpace(need); err != nil {
		return Session{}, err
	}
	if err := validID(id); err != nil {
		return Session{}, err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	sess, err := s.session(id)
	if err != nil {
		return Session{}, err
	}
	if rw.BaseEpoch != sess.Head.Epoch || rw.BaseLen != sess.Head.ViewLen {
		return Session{}, fmt.Errorf("%w: planned against epoch %d with %d messages, now epoch %d with %d",
			ErrStale, rw.BaseEpoch, rw.BaseLen, sess.Head.Epoch, sess.Head.ViewLen)
	}
	if rw.Drop < 0 || rw.Drop > sess.Head.ViewLen {
		return Session{}, fmt.Errorf("rewrite drops %d of %d messages", rw.Drop, sess.Head.ViewLen)
	}
	for pos := range rw.Replace {
		if pos < rw.Drop || pos >= sess.Head.ViewLen {
			return Session{}, fmt.Errorf("rewrite replaces position %d outside the kept range [%d,%d)", pos, rw.Drop, sess.Head.ViewLen)
		}
	}
	for pos := range rw.InsertAfter {
		if pos < rw.Drop || pos >= sess.Head.ViewLen {
			return Session{}, fmt.Errorf("rewrite inserts after position %d outside the kept range [%d,%d)", pos, rw.Drop, sess.Head.ViewLen)
		}
	}
	// The kept entries carry their messages' figures: the new view's totals are counted from them and from the
	// new messages, without reading a kept message.
	kept := make([]viewEntry, 0, sess.Head.ViewLen-rw.Drop)
	if err := s.db.View(func(txn *badger.Txn) error {
		return eachViewEntry(txn, id, sess.Head, 0, sess.Head.ViewLen, func(pos int, v []byte) error {
			if pos < rw.Drop {
				return nil
			}
			e, err := decodeEntry(v)
			if err != nil {
				return fmt.Errorf("session %s: view position %d: %w", id, pos, err)
			}
			kept = append(kept, e)
			return nil
		})
	}); err != nil {
		return Session{}, err
	}
	old, next := sess.Head.Epoch, sess.Head.Epoch+1
	// The current view stays, for Undo, with the undoDepth before it; a half-staged next one is the leftover
	// of a write a crash cut.
	s.dropPrefix(viewPrefix(id, next))

	now := time.Now().UTC()
	w := s.newChunkedWriter(sess.Head.Totals.history())
	defer w.discard()
	head, _, err := w.stage(id, sess.Head, next, 0, rw.Insert, now)
	if err != nil {
		return Session{}, err
	}
	for i := rw.Drop; i < sess.Head.ViewLen; i++ {
		if m, ok := rw.Replace[i]; ok {
			head, _, err = w.stage(id, head, next, head.ViewLen, []transcript.Message{m}, now)
			if err != nil {
				return Session{}, err
			}
		} else {
			if err := w.place(viewKey(id, next, head.ViewLen), &kept[i-rw.Drop]); err != nil {
				return Session{}, err
			}
			head.ViewLen++
		}
		if extra := rw.InsertAfter[i]; len(extra) > 0 {
			if head, _, err = w.stage(id, head, next, head.ViewLen, extra, now); err != nil {
				return Session{}, err
			}
		}
	}
	rec := epochRecord{Undoable: true, Kind: rewriteKind(rw), Parent: old, ParentLen: sess.Head.ViewLen, Created: head.ViewLen}
	// Edits of a checkpoint one after the other (an editor saving as the user types) are one step to undo:
	// this one takes the place of the edit before it, when nothing was added since.
	collapsed := false
	if rec.Kind == KindCheckpointEdit {
		var prev epochRecord
		var ok bool
		if err := s.db.View(func(txn *badger.Txn) error {
			prev, ok, err = readEpochRecord(txn, id, old)
			return err
		}); err != nil {
			return Session{}, err
		}
		if ok && prev.Undoable && prev.Kind == KindCheckpointEdit && prev.Created == sess.Head.ViewLen {
			rec.Parent, rec.ParentLen, rec.Inserted, collapsed = prev.Parent, prev.ParentLen, prev.Inserted, true
		}
	}
	for seq := sess.Head.NextSeq; seq < head.NextSeq; seq++ {
		rec.Inserted = append(rec.Inserted, seq)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return Session{}, err
	}
	if err := w.set(epochKey(id, next), raw); err != nil {
		return Session{}, err
	}
	sess.Head, sess.UpdatedAt = head, now
	if sess, err = w.commit(sess, false); err != nil {
		return Session{}, err
	}
	if collapsed {
		s.dropPrefix(viewPrefix(id, old)) // the edit this one replaced: no undo reaches its view
	} else {
		s.dropOldViews(id, old)
	}
	return sess, nil
}

// DeleteSession removes session id and all its messages. The session disappears with the first write; the
// rest is removed afterwards.
func (s *Store) DeleteSession(id string) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	if err := validID(id); err != nil {
		return err
	}
	l := s.sessionLock(id)
	l.Lock()
	defer l.Unlock()
	err = s.db.Update(func(txn *badger.Txn) error {
		if _, _, err := getSession(txn, id); err != nil {
			return err
		}
		if err := txn.Delete(headKey(id)); err != nil {
			return fmt.Errorf("deleting session %s: %w", id, err)
		}
		if err := txn.Delete(measureKey(id)); err != nil {
			return fmt.Errorf("deleting session %s: %w", id, err)
		}
		return txn.Delete(sessionKey(id))
	})
	s.forget(id)
	if err != nil {
		return err
	}
	s.dropPrefix(historyPrefix(id))
	s.dropPrefix(viewSessionPrefix(id))
	s.dropPrefix(epochPrefix(id))
	s.dropPrefix(changesPrefix(id))
	return nil
}

// dropPrefix deletes every key under prefix, best effort: keys it leaves behind are invisible garbage.
func (s *Store) dropPrefix(prefix []byte) {
	var keys [][]byte
	_ = s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if len(keys) == 0 {
		return
	}
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	for _, k := range keys {
		if wb.Delete(k) != nil {
			return
		}
	}
	_ = wb.Flush()
}

// viewSeqs reads the sequences of the whole current view, in position order.
func viewSeqs(txn *badger.Txn, id string, head Head) ([]uint64, error) {
	return viewRange(txn, id, head, 0, head.ViewLen)
}

// viewRange reads the sequences at positions [from, from+n) of the session's current view.
func viewRange(txn *badger.Txn, id string, head Head, from, n int) ([]uint64, error) {
	seqs := make([]uint64, 0, n)
	err := eachViewEntry(txn, id, head, from, n, func(pos int, v []byte) error {
		if len(v) < 8 {
			return fmt.Errorf("session %s: bad view entry at position %d", id, pos)
		}
		seqs = append(seqs, binary.BigEndian.Uint64(v)) // the sequence starts every entry, of any format
		return nil
	})
	return seqs, err
}

// eachViewEntry calls fn with the entries at positions [from, from+n) of the session's current view, in order,
// and checks that all of them are there, without a gap. Entries are small and stored inline: they are read
// without Badger's value prefetching, which would start a goroutine per entry.
func eachViewEntry(txn *badger.Txn, id string, head Head, from, n int, fn func(pos int, v []byte) error) error {
	prefix := viewPrefix(id, head.Epoch)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	pos := from
	for it.Seek(viewKey(id, head.Epoch, from)); it.Valid() && pos < from+n; it.Next() {
		if got := binary.BigEndian.Uint64(it.Item().Key()[len(prefix):]); got != uint64(pos) {
			return fmt.Errorf("session %s: view epoch %d has a gap at position %d", id, head.Epoch, pos)
		}
		if err := it.Item().Value(func(v []byte) error { return fn(pos, v) }); err != nil {
			return err
		}
		pos++
	}
	if pos != from+n {
		return fmt.Errorf("session %s: view epoch %d has %d of the %d messages from position %d", id, head.Epoch, pos-from, n, from)
	}
	return nil
}

// readMessages reads the messages with the given sequences, in that order. It walks the history in sequence
// order with one iterator, seeking only over gaps, so a view whose messages are mostly consecutive (the kept
// tail of a compacted session, a fresh one) reads as one sequential scan; the values it reads are decoded on
// other goroutines meanwhile (see decoder).
func readMessages(txn *badger.Txn, id string, seqs []uint64) ([]transcript.Message, error) {
	out := make([]transcript.Message, len(seqs))
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return seqs[order[a]] < seqs[order[b]] })
	// Messages are stored inline in the LSM tree (they are far below Badger's value threshold), so prefetching
	// would only start a goroutine and copy the value for each of them.
	it := txn.NewIterator(badger.IteratorOptions{Prefix: historyPrefix(id)})
	defer it.Close()
	d := newDecoder(id, out)
	defer d.close()
	for k, idx := range order {
		key := historyKey(id, seqs[idx])
		if k == 0 || !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			it.Seek(key)
		}
		if !it.Valid() || !bytes.Equal(it.Item().Key(), key) {
			return nil, fmt.Errorf("reading message %d of session %s: %w", seqs[idx], id, badger.ErrKeyNotFound)
		}
		if err := it.Item().Value(func(v []byte) error { d.add(idx, seqs[idx], v); return nil }); err != nil {
			return nil, fmt.Errorf("reading message %d of session %s: %w", seqs[idx], id, err)
		}
		it.Next()
	}
	if err := d.close(); err != nil {
		return nil, err
	}
	return out, nil
}

// chunkedWriter writes in as many transactions as Badger's size limit needs; only its final commit, which
// carries the session's head, makes the staged entries part of the session. It counts the totals of what it
// stores and places as it goes.
type chunkedWriter struct {
	store *Store
	db    *badger.DB
	txn   *badger.Txn
	tally *tally
}

// newChunkedWriter starts a write whose totals continue from from (see newTally).
func (s *Store) newChunkedWriter(from Totals) *chunkedWriter {
	return &chunkedWriter{store: s, db: s.db, txn: s.db.NewTransaction(true), tally: newTally(from)}
}

// MaxEntryBytes is the largest record the store takes (a message, as JSON): far above what any message
// needs, and below Badger's own limit, whose error would carry a hex dump of the value.
const MaxEntryBytes = 64 << 20

func (w *chunkedWriter) set(k, v []byte) error {
	if len(v) > MaxEntryBytes {
		return fmt.Errorf("a message of %d MB is larger than a session can store (%d MB); nothing of it was saved", len(v)>>20, MaxEntryBytes>>20)
	}
	err := w.txn.Set(k, v)
	if errors.Is(err, badger.ErrTxnTooBig) {
		if err := w.txn.Commit(); err != nil {
			return fmt.Errorf("committing staged entries: %w", err)
		}
		w.txn = w.db.NewTransaction(true)
		err = w.txn.Set(k, v)
	}
	if err != nil {
		return fmt.Errorf("staging entry: %w", err)
	}
	return nil
}

// stage stores msgs as new history entries and places them at view positions from pos of epoch.
func (w *chunkedWriter) stage(id string, head Head, epoch uint64, pos int, msgs []transcript.Message, now time.Time) (Head, []transcript.Message, error) {
	stored := make([]transcript.Message, len(msgs))
	head.Epoch = epoch
	for i, m := range msgs {
		if m.ID == "" {
			m.ID = transcript.NewID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		m.Compacted = false
		raw, err := json.Marshal(m)
		if err != nil {
			return head, nil, fmt.Errorf("encoding message %s: %w", m.ID, err)
		}
		if err := w.set(historyKey(id, head.NextSeq), raw); err != nil {
			return head, nil, err
		}
		m.Measure()
		w.tally.store(&m)
		e := entryOf(&m, head.NextSeq)
		if err := w.place(viewKey(id, epoch, pos), &e); err != nil {
			return head, nil, err
		}
		head.NextSeq++
		pos++
		stored[i] = m
	}
	head.ViewLen = pos
	return head, stored, nil
}

// place writes e at view key k and counts it.
func (w *chunkedWriter) place(k []byte, e *viewEntry) error {
	w.tally.place(e)
	return w.set(k, e.encode())
}

// commit writes the session's head, with the totals counted, and with withMeta its record (title, workspace,
// instructions…), then commits; it returns the session as committed. The head goes first: should Badger's size
// limit split them, a crash between the two leaves a new session invisible (no record) and an existing one
// with its new head beside its previous record, never a record without its head.
func (w *chunkedWriter) commit(sess Session, withMeta bool) (Session, error) {
	sess.Head.Totals = w.tally.totals()
	raw, err := json.Marshal(headJSON{Head: sess.Head, UpdatedAt: sess.UpdatedAt})
	if err != nil {
		return Session{}, fmt.Errorf("encoding the head of session %s: %w", sess.ID, err)
	}
	if err := w.set(headKey(sess.ID), raw); err != nil {
		return Session{}, err
	}
	if withMeta {
		meta, err := json.Marshal(metaJSON{Session: &sess})
		if err != nil {
			return Session{}, fmt.Errorf("encoding session %s: %w", sess.ID, err)
		}
		if err := w.set(sessionKey(sess.ID), meta); err != nil {
			return Session{}, err
		}
	}
	if err := w.txn.Commit(); err != nil {
		w.store.forget(sess.ID)
		return Session{}, fmt.Errorf("committing session %s: %w", sess.ID, err)
	}
	w.store.remember(sess)
	return sess, nil
}

func (w *chunkedWriter) discard() { w.txn.Discard() }

// badgerLogger routes Badger's messages to zap; Badger is chatty, so its info goes to debug.
type badgerLogger struct{ l *zap.SugaredLogger }

// Errorf, Warningf, Infof and Debugf implement badger.Logger.
func (b badgerLogger) Errorf(f string, a ...any)   { b.l.Errorf("badger: "+strings.TrimSpace(f), a...) }
func (b badgerLogger) Warningf(f string, a ...any) { b.l.Warnf("badger: "+strings.TrimSpace(f), a...) }
func (b badgerLogger) Infof(f string, a ...any)    { b.l.Debugf("badger: "+strings.TrimSpace(f), a...) }
func (b badgerLogger) Debugf(f string, a ...any)   { b.l.Debugf("badger: "+strings.TrimSpace(f), a...) }
