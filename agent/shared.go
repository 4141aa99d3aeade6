package agent

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// Shared is what the agents of one process share: the shared daemon runs one agent per editor window, and
// two windows must not run turns of one session at once, nor forget the window a provider reported. A nil
// *Shared given to New is replaced by one of the agent's own.
type Shared struct {
	mu sync.Mutex // guards turns, windows and calibrations
	// turns are the locks of the sessions whose turns run or wait, counted: an entry goes with its last user.
	turns map[turnKey]*turnLock
	// windows remembers the window each provider model reported (base URL and model → tokens), so that a
	// provider that does not answer later keeps its model's window instead of a guess.
	windows map[string]int
	// calibrations are each session's last request size beside the prompt tokens the provider reported for it:
	// every window on the session calibrates its meter alike, whichever window ran the turn.
	calibrations map[turnKey]calibration
}

// calibration is the chars of a session's last request and the prompt tokens the provider reported for it.
type calibration struct{ chars, reported int }

// NewShared returns an empty Shared.
func NewShared() *Shared {
	return &Shared{turns: map[turnKey]*turnLock{}, windows: map[string]int{}, calibrations: map[turnKey]calibration{}}
}

// calibrate records the provider's report of reported prompt tokens for a request of chars of session id.
func (s *Shared) calibrate(store *storage.Store, id string, chars, reported int) {
	s.mu.Lock()
	s.calibrations[turnKey{store, id}] = calibration{chars, reported}
	s.mu.Unlock()
}

// calibrationOf is session id's last calibration (zero: no report yet in this process).
func (s *Shared) calibrationOf(store *storage.Store, id string) calibration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calibrations[turnKey{store, id}]
}

type turnKey struct {
	store   *storage.Store
	session string
}

// turnLock serializes the turns of one session; users counts those holding or waiting for it.
type turnLock struct {
	sync.Mutex
	users int
}

// lockTurn waits until no other turn (compaction, recovery) of session id runs on store, and takes the turn;
// the returned function gives it back.
func (s *Shared) lockTurn(store *storage.Store, id string) (unlock func()) {
	key := turnKey{store, id}
	s.mu.Lock()
	l := s.turns[key]
	if l == nil {
		l = &turnLock{}
		s.turns[key] = l
	}
	l.users++
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.turns, key)
		}
		s.mu.Unlock()
	}
}

// heldTurns is the number of sessions whose turn locks are held or waited for (tests).
func (s *Shared) heldTurns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

// ResolveWindow is the context window (tokens, 0: unknown) of cfg's active provider and where it came from:
// the settings, else the provider's model list (asked through model, which may be nil when no provider is
// configured), else the window the same model reported earlier in this process. The daemon, prompt, compact
// and context all resolve it here.
func (s *Shared) ResolveWindow(ctx context.Context, cfg config.Config, model provider.Model, log *zap.Logger) (int, string) {
	p, source := cfg.ActiveProvider()
	if p.ContextWindow > 0 || model == nil {
		return p.ContextWindow, source
	}
	w, err := model.ContextWindow(ctx)
	if err != nil {
		// Not a warning: the model call that follows says clearly when the provider cannot be reached.
		log.Info("could not read the context window from the provider's model list", zap.Error(err))
	}
	key := p.BaseURL + "\x00" + p.Model
	s.mu.Lock()
	defer s.mu.Unlock()
	if w > 0 {
		s.windows[key] = w
		return w, "models"
	}
	if last, ok := s.windows[key]; ok {
		// The provider did not answer this time: the window it gave before for this model, not a guess.
		return last, "models (last known; the provider did not answer)"
	}
	return 0, source
}
