package agent

import (
	"context"
	"fmt"
	"time"
)

// ProviderCheck is what asking the provider found: the model it serves and the window its model list reports
// (0: it does not say).
type ProviderCheck struct {
	Model  string `json:"model"`
	Window int    `json:"window"`
}

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
		return ProviderCheck{}, fmt.Errorf("%w: %s does not answer: %w", ErrModelCall, p.BaseURL, err)
	}
	return ProviderCheck{Model: p.Model, Window: w}, nil
}
