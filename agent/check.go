package agent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ProviderCheck is what asking the provider found: the model it serves and the window its model list reports
// (0: it does not say).
type ProviderCheck struct {
	Model  string `json:"model"`
	Window int    `json:"window"`
}

// ErrProviderSilent: the provider did not answer CheckProvider (unreachable, a refused key, not an
// OpenAI- or Anthropic-compatible server).
var ErrProviderSilent = errors.New("the provider does not answer")

// checkTimeout bounds CheckProvider's request.
const checkTimeout = 15 * time.Second

// CheckProvider asks the configured provider for its model list: an error says why it does not answer (no
// provider, unreachable, a refused key).
func (a *Agent) CheckProvider(ctx context.Context) (ProviderCheck, error) {
	cfg := a.Settings()
	p, _ := cfg.ActiveProvider()
	lister, ok := a.Chat.(interface {
		ContextWindow(ctx context.Context) (int, error)
	})
	if a.Chat == nil || !ok {
		return ProviderCheck{}, ErrNoProvider
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	w, err := lister.ContextWindow(ctx)
	if err != nil {
		return ProviderCheck{}, fmt.Errorf("%w at %s (asked for its model list): %w", ErrProviderSilent, p.BaseURL, err)
	}
	return ProviderCheck{Model: p.Model, Window: w}, nil
}
