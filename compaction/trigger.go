package compaction

import (
	"math"

	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// MaxTrustedWindow is the largest declared context window taken at face value (A2), in tokens.
const MaxTrustedWindow = 2_000_000

// Rule names what fired a compaction.
type Rule string

// The trigger rules of SPEC §3.
const (
	RuleNone    Rule = ""
	RuleWindow  Rule = "window"  // A1/A2: the full request reached threshold × window
	RuleReserve Rule = "reserve" // A1: the request plus the reply budget no longer fits the window
	RuleChars   Rule = "chars"   // A3: instructions + transcript reached threshold × maxContextChars
)

// Budget is what the triggers measure against.
type Budget struct {
	Threshold       float64
	MaxContextChars int
	MaxOutputTokens int
	// Window is the model's context window in tokens (0: unknown) and WindowSource where it came from.
	Window       int
	WindowSource string
	// CharsPerToken is how many chars make a token of the provider's (0: 4, the estimate's). It is lower for a
	// session whose provider refused a request as over its window: its tokenizer counts more than chars/4.
	CharsPerToken float64
}

// Tokens is chars in tokens: chars/4, or at CharsPerToken when that counts more.
func (b Budget) Tokens(chars int) int {
	if cpt := b.CharsPerTokenInUse(); cpt < 4 {
		return int(math.Ceil(float64(chars) / cpt))
	}
	return transcript.EstimateTokens(chars)
}

// CharsPerTokenInUse is the ratio Tokens counts at: 4, or CharsPerToken when lower.
func (b Budget) CharsPerTokenInUse() float64 {
	if b.CharsPerToken <= 0 || b.CharsPerToken >= 4 {
		return 4
	}
	return b.CharsPerToken
}

// KnownWindow reports whether the model's window is known and trusted (A1), rather than stood in for by
// maxContextChars/4 tokens (A2).
func (b Budget) KnownWindow() bool { return b.Window > 0 && b.Window <= MaxTrustedWindow }

// EffectiveWindow is the window the window rule uses: the known window up to MaxTrustedWindow, else
// maxContextChars/4 tokens (A2). The second result names its source.
func (b Budget) EffectiveWindow() (int, string) {
	if b.KnownWindow() {
		src := b.WindowSource
		if src == "" {
			src = "config"
		}
		return b.Window, src
	}
	if b.Window > MaxTrustedWindow {
		return b.MaxContextChars / 4, "maxContextChars (declared window over 2,000,000 tokens ignored)"
	}
	return b.MaxContextChars / 4, "maxContextChars"
}

// HardLimit is the most instructions + transcript may hold (H1): maxContextChars, lowered when the model's
// window is known to what fits in it (about 4 chars a token, or CharsPerToken) after the reply reserve (limits.maxOutputTokens)
// and the tool catalog, so that no request is ever sent that the model cannot take. byWindow reports the
// lowering.
func (b Budget) HardLimit(toolsChars int) (limit int, byWindow bool) {
	if !b.KnownWindow() {
		return b.MaxContextChars, false
	}
	fits := int(float64(b.Window-b.MaxOutputTokens)*b.CharsPerTokenInUse()) - toolsChars
	if fits < b.MaxContextChars {
		return max(fits, 0), true
	}
	return b.MaxContextChars, false
}

// Sizes are the character counts of a request's three parts.
type Sizes struct {
	Instructions int
	Transcript   int
	Tools        int
}

// Reducible is what the hard limit counts: instructions + transcript, never the tool catalog (TC1).
func (s Sizes) Reducible() int { return s.Instructions + s.Transcript }

// Request is the full request: instructions + transcript + tool catalog.
func (s Sizes) Request() int { return s.Reducible() + s.Tools }

// Decision is the outcome of the triggers for one model call, with the numbers behind it.
type Decision struct {
	Compact bool
	Rule    Rule
	// RequestTokens is the estimated tokens of the full request; Window and WindowSource the window used.
	RequestTokens int
	Window        int
	WindowSource  string
	// WindowFraction and CharsFraction are how far each rule is toward firing (1.0 = fires): the window's
	// counts the threshold and, in a known window, the reply reserve, whichever comes first.
	WindowFraction float64
	CharsFraction  float64
	// HardLimit is Budget.HardLimit for this request, and HardLimitByWindow its second result.
	HardLimit         int
	HardLimitByWindow bool
	// OverHardLimit reports that instructions + transcript exceed HardLimit (H1).
	OverHardLimit bool
	// CompactsAtTokens is the request size in tokens at which the window rule or, in a known window, the
	// reply-reserve rule fires, whichever comes first: a small window keeps the reply's room before it reaches
	// the threshold.
	CompactsAtTokens int
}

// Decide evaluates the triggers of SPEC §3 in O(1) from running sizes.
func Decide(s Sizes, b Budget) Decision {
	win, src := b.EffectiveWindow()
	d := Decision{RequestTokens: b.Tokens(s.Request()), Window: win, WindowSource: src}
	windowLimit := b.Threshold * float64(win)
	charsLimit := b.Threshold * float64(b.MaxContextChars)
	thresholdFraction := ratio(float64(d.RequestTokens), windowLimit)
	d.WindowFraction = thresholdFraction
	d.CompactsAtTokens = int(math.Ceil(windowLimit))
	// The reply's room is kept in a real window only: maxContextChars/4 stands in for an unknown window in the
	// threshold rule (A2), and a small one would otherwise call for a compaction before every call.
	reserveFires := b.KnownWindow() && d.RequestTokens+b.MaxOutputTokens > win
	if b.KnownWindow() {
		reserveAt := win - b.MaxOutputTokens
		d.CompactsAtTokens = min(d.CompactsAtTokens, max(reserveAt+1, 0))
		d.WindowFraction = max(thresholdFraction, ratio(float64(d.RequestTokens), float64(reserveAt+1)))
	}
	d.CharsFraction = ratio(float64(s.Reducible()), charsLimit)
	d.HardLimit, d.HardLimitByWindow = b.HardLimit(s.Tools)
	d.OverHardLimit = s.Reducible() > d.HardLimit
	switch {
	case thresholdFraction >= 1:
		d.Compact, d.Rule = true, RuleWindow
	case reserveFires:
		d.Compact, d.Rule = true, RuleReserve
	case d.CharsFraction >= 1:
		d.Compact, d.Rule = true, RuleChars
	}
	return d
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}

// Meter keeps the running character count of a transcript so that each new message costs O(1).
type Meter struct {
	chars int
}

// NewMeter measures msgs once.
func NewMeter(msgs []transcript.Message) *Meter {
	return &Meter{chars: transcript.TotalChars(msgs)}
}

// MeterAt is the meter of a transcript already measured at chars (a stored session's running total).
func MeterAt(chars int) *Meter { return &Meter{chars: chars} }

// Add accounts for appended messages.
func (m *Meter) Add(msgs ...transcript.Message) {
	for i := range msgs {
		m.chars += msgs[i].Chars()
	}
}

// Chars is the transcript's character count.
func (m *Meter) Chars() int { return m.chars }

// BudgetFor builds the trigger budget from the configuration and the known window (0: unknown).
func BudgetFor(cfg config.Config, window int, source string) Budget {
	return Budget{Threshold: cfg.Compaction.Threshold, MaxContextChars: cfg.Limits.MaxContextChars,
		MaxOutputTokens: cfg.Limits.MaxOutputTokens, Window: window, WindowSource: source}
}
