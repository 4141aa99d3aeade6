package agent

import (
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// measure is what the provider's refusals of a session's requests as over the model's window showed: the
// chars per token its tokenizer counts (0: chars/4 holds) and the window when it said a smaller one (0: the
// known window holds). provider names the model that refused (providerName); the session is kept measured by
// it in the store, so that a restart, or the command line, sizes it the same.
type measure struct {
	provider      string
	charsPerToken float64
	window        int
}

// WindowSourceRefusal is the window's source when the provider named it in refusing a request over it.
const WindowSourceRefusal = "refusal"

// minCharsPerToken is the fewest chars a token is taken to hold, whatever a provider's count says.
const minCharsPerToken = 1.0

// overflowShrink is how much more a request is counted after a refusal that teaches nothing new (learnt: its
// count is within 5 % of the one in use): a quarter more.
const (
	overflowShrink = 0.8
	learnt         = 0.95
)

// MaxOverflowRetries is how many times one model call of a turn is measured again, compacted and sent again
// after the provider refused it as over the model's window.
const MaxOverflowRetries = 3

// apply is b measured by ms.
func (ms measure) apply(b compaction.Budget) compaction.Budget {
	if ms.charsPerToken > 0 {
		b.CharsPerToken = ms.charsPerToken
	}
	if ms.window > 0 && (!b.KnownWindow() || ms.window < b.Window) {
		b.Window, b.WindowSource = ms.window, WindowSourceRefusal
	}
	return b
}

// providerName names the model cfg sends to, as a measure records it: its kind, address and name.
func providerName(cfg config.Config) string {
	p, _ := cfg.ActiveProvider()
	return p.Kind + " " + p.BaseURL + " " + p.Model
}

// budgetOf is the budget of session id: the settings' and the known window, measured as the provider's
// refusals of its requests showed, if any, while the session is sent to the model that refused them.
func (m *ContextManager) budgetOf(id string) compaction.Budget {
	cfg := m.Settings()
	ms := m.measureOf(id)
	if ms.provider != providerName(cfg) {
		ms = measure{}
	}
	return ms.apply(m.budgetFor(cfg))
}

// measureOf is session id's measure: the one learnt in this process, else the one kept in the store, read once.
// A measure that cannot be read counts as none in this process (a refusal teaches it again).
func (m *ContextManager) measureOf(id string) measure {
	m.measuresMu.Lock()
	ms, ok := m.measures[id]
	m.measuresMu.Unlock()
	if ok {
		return ms
	}
	kept, found, err := m.Store.Measure(id)
	if found && err == nil {
		ms = measure{provider: kept.Provider, charsPerToken: kept.CharsPerToken, window: kept.Window}
	}
	m.measuresMu.Lock()
	defer m.measuresMu.Unlock()
	if learnt, ok := m.measures[id]; ok { // a refusal meanwhile
		return learnt
	}
	if m.measures == nil {
		m.measures = map[string]measure{}
	}
	m.measures[id] = ms
	return ms
}

// learnOverflow records what the provider's refusal e of a request of chars chars of session id says, so that
// the session's next requests are measured by it: the chars per token of the provider's count of the request
// (else of the window it passed: the one the provider names, or the known one), and a smaller window than the
// one known. A refusal that teaches neither counts requests a quarter larger than before. It returns the
// session's budget from then on, and keeps the measure with the session; err says that it could not be kept
// (the budget holds for this process all the same).
func (m *ContextManager) learnOverflow(id string, chars int, e *provider.ContextOverflowError) (compaction.Budget, error) {
	cfg := m.Settings()
	b, name := m.budgetFor(cfg), providerName(cfg)
	m.measureOf(id) // the kept measure, before this refusal adds to it
	m.measuresMu.Lock()
	ms := m.measures[id]
	if ms.provider != name {
		ms = measure{provider: name}
	}
	known := ms.apply(b)
	cpt := known.CharsPerTokenInUse()
	next := cpt
	switch {
	case e.InputTokens > 0: // the provider's count of this very request
		next = float64(chars) / float64(e.InputTokens)
	case e.Window > 0: // the request was over the window it names
		next = float64(chars) / float64(e.Window)
	case known.KnownWindow(): // over the known window, the provider says
		next = float64(chars) / float64(known.Window)
	}
	next = min(next, cpt)
	smaller := e.Window > 0 && (!known.KnownWindow() || e.Window < known.Window)
	if smaller {
		ms.window = e.Window
	}
	if next >= cpt*learnt && !smaller {
		next = cpt * overflowShrink
	}
	ms.charsPerToken = max(next, minCharsPerToken)
	m.measures[id] = ms
	m.measuresMu.Unlock()
	err := m.Store.SaveMeasure(id, storage.ProviderMeasure{Provider: ms.provider, CharsPerToken: ms.charsPerToken, Window: ms.window})
	return ms.apply(b), err
}
