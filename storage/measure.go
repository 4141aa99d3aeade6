package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ProviderMeasure is what a provider's refusals of a session's requests as over the model's window showed. It
// is kept with the session, so that a restarted daemon and the command line size the session's requests as the
// daemon that saw the refusals did.
type ProviderMeasure struct {
	// Provider names the model whose count this is (its kind, address and name): a session sent to another
	// model is measured afresh.
	Provider string `json:"provider"`
	// CharsPerToken is the chars a token of that model's count holds (0: chars/4 holds).
	CharsPerToken float64 `json:"charsPerToken,omitempty"`
	// Window is the window the provider named when smaller than the one known (0: the known window holds).
	Window int       `json:"window,omitempty"`
	At     time.Time `json:"at"`
}

func measureKey(session string) []byte { return []byte("p/" + session) }

// SaveMeasure keeps m as session's provider measure, in place of the one kept before.
func (s *Store) SaveMeasure(session string, m ProviderMeasure) error {
	release, err := s.enter()
	if err != nil {
		return err
	}
	defer release()
	if err := validID(session); err != nil {
		return err
	}
	if err := s.haveSpace(256); err != nil {
		return err
	}
	if m.At.IsZero() {
		m.At = time.Now().UTC()
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	err = s.db.Update(func(txn *badger.Txn) error {
		if _, _, err := getSession(txn, session); err != nil { // no measure outlives its session
			return err
		}
		return txn.Set(measureKey(session), raw)
	})
	if err != nil {
		return fmt.Errorf("keeping the provider's measure of session %s: %w", session, err)
	}
	return nil
}

// Measure is session's provider measure; ok is false when none is kept.
func (s *Store) Measure(session string) (m ProviderMeasure, ok bool, err error) {
	release, err := s.enter()
	if err != nil {
		return m, false, err
	}
	defer release()
	err = s.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(measureKey(session))
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = true
		return item.Value(func(v []byte) error { return json.Unmarshal(v, &m) })
	})
	if err != nil {
		return ProviderMeasure{}, false, fmt.Errorf("reading the provider's measure of session %s: %w", session, err)
	}
	return m, ok, nil
}
