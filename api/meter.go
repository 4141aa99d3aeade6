package api

import (
	"fmt"
	"math"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// Meter is the meter in the user's units: the tokens the next request holds — one figure, and where it comes
// from — of the limit that compaction's threshold is a share of.
type Meter struct {
	// Tokens is the request's size in tokens: calibrated from the provider's own counts when it has reported
	// some, else estimated at about 4 chars a token (TokensSource says which).
	Tokens       int    `json:"tokens"`
	TokensSource string `json:"tokensSource"`
	// LimitTokens is the limit of the rule closest to firing: the model's window, or limits.maxContextChars
	// (and the tool catalog sent beside it) at about 4 chars a token (Tokens is then estimated the same way).
	// Compaction starts at about CompactsAt of it.
	LimitTokens int `json:"limitTokens"`
	// CompactsAt is the share of LimitTokens at which compaction starts: the threshold, or less in a window
	// too small to keep the reply's room (limits.maxOutputTokens) up to the threshold.
	CompactsAt float64 `json:"compactsAt"`
	// CompactsAtText says where compaction starts in a sentence: "compaction starts at 75% of the 16k-token
	// window, before the 85% threshold, so that 4.1k tokens stay free for the reply (limits.maxOutputTokens)".
	CompactsAtText string `json:"compactsAtText"`
	// WindowFrom says in words where the window came from (WindowFrom); NextCall what the next model call does
	// first (NextCall): the editors show these words as they are.
	WindowFrom string `json:"windowFrom"`
	NextCall   string `json:"nextCall"`
	// Cache is what the provider's prompt cache did (nil until a reply reported a usage).
	Cache *CacheMeter `json:"cache,omitempty"`
}

// CacheMeter is what the provider's prompt cache did, in tokens of input: for the last request and over the
// session, all of it, the part read from the cache (billed at about a tenth) and the part written to it
// (Anthropic: billed at 125 %), with the sentence a user reads.
type CacheMeter struct {
	LastInput      int `json:"lastInput"`
	LastCached     int `json:"lastCached"`
	LastCacheWrite int `json:"lastCacheWrite,omitempty"`
	Input          int `json:"input"`
	Cached         int `json:"cached"`
	CacheWrite     int `json:"cacheWrite,omitempty"`
	// Text says it in a sentence: "prompt cache: the last request read 82% of its 14k input tokens from the
	// cache; this session 78% of 1.2M".
	Text string `json:"text"`
}

// cacheMeterOf is the cache's figures of u (nil when nothing was reported).
func cacheMeterOf(u *storage.UsageTotals) *CacheMeter {
	if u == nil || u.Input == 0 {
		return nil
	}
	c := &CacheMeter{LastInput: u.Last.PromptTokens, LastCached: u.Last.CachedTokens, LastCacheWrite: u.Last.CacheWriteTokens,
		Input: u.Input, Cached: u.Cached, CacheWrite: u.CacheWrite}
	share := func(part, whole int) int { return int(math.Round(100 * float64(part) / float64(max(whole, 1)))) }
	if u.Cached == 0 && u.CacheWrite == 0 {
		c.Text = fmt.Sprintf("prompt cache: nothing read from it yet (%s input tokens this session; a server without a cache reports none)", Human(u.Input))
		return c
	}
	c.Text = fmt.Sprintf("prompt cache: the last request read %d%% of its %s input tokens from the cache; this session %d%% of %s",
		share(u.Last.CachedTokens, u.Last.PromptTokens), Human(u.Last.PromptTokens), share(u.Cached, u.Input), Human(u.Input))
	if u.CacheWrite > 0 {
		c.Text += fmt.Sprintf(" (%s written to it)", Human(u.CacheWrite))
	}
	return c
}

// MeterOf is st's meter in tokens.
func MeterOf(st agent.Status) Meter {
	m := Meter{Tokens: st.EstimatedTokens, TokensSource: "estimated"}
	if st.LastReportedTokens > 0 && st.CalibratedTokens > 0 {
		m.Tokens, m.TokensSource = st.CalibratedTokens, "calibrated"
	}
	windowKnown := st.Window > 0 && !strings.HasPrefix(st.WindowSource, "maxContextChars")
	m.CompactsAt = st.Threshold
	percent := func(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
	if windowKnown && st.WindowFraction >= st.CharsFraction {
		m.LimitTokens = st.Window
		m.CompactsAtText = fmt.Sprintf("compaction starts at %s of the %s-token window", percent(st.Threshold), Human(st.Window))
		if at := st.CompactsAtTokens; at > 0 && float64(at) < st.Threshold*float64(st.Window) {
			m.CompactsAt = float64(at) / float64(st.Window)
			m.CompactsAtText = fmt.Sprintf("compaction starts at %s of the %s-token window, before the %s threshold, so that %s tokens stay free for the reply (limits.maxOutputTokens)",
				percent(m.CompactsAt), Human(st.Window), percent(st.Threshold), Human(st.Window-at+1))
		}
	} else {
		m.CompactsAtText = fmt.Sprintf("compaction starts at %s of limits.maxContextChars", percent(st.Threshold))
		if !windowKnown {
			m.CompactsAtText += " (the model's window is not known)"
		}
		// limits.maxContextChars is the rule closest to firing (or the window is unknown): the meter counts in
		// estimated tokens (about 4 chars a token) of the hard limit and the tool catalog sent beside it, a
		// limit that stays put whatever the provider's counts say.
		m.Tokens, m.TokensSource = st.EstimatedTokens, "estimated"
		m.LimitTokens = (st.HardLimit + st.ToolsChars) / 4
	}
	m.WindowFrom, m.NextCall = WindowFrom(st.WindowSource), NextCall(st)
	m.Cache = cacheMeterOf(st.Usage)
	return m
}

// WindowFrom says in words where the window came from.
func WindowFrom(source string) string {
	switch {
	case strings.HasPrefix(source, "models"):
		return "read from the provider's model list" + strings.TrimPrefix(source, "models")
	case strings.HasPrefix(source, "maxContextChars"):
		return "not known: limits.maxContextChars ÷ 4" + strings.TrimPrefix(source, "maxContextChars")
	}
	switch source {
	case "config":
		return "from your settings or --context-window"
	case agent.WindowSourceRefusal:
		return "said by the provider when it refused a larger request"
	}
	return "from your settings: " + source
}

// NextCall says what the next model call does first.
func NextCall(s agent.Status) string {
	switch {
	case len(s.UncertainCalls) > 0:
		return "none yet: a prompt is refused until the uncertain tool calls are recorded (see the notice)"
	case strings.HasPrefix(s.NextAction, "compact") && !s.Auto:
		return "sends as is: compaction is due, but automatic compaction is off (compaction.auto)"
	case s.NextAction == "compact (window)":
		return "compacts first: the request is past the window's compaction point"
	case strings.HasPrefix(s.NextAction, "compact"):
		return "compacts first: the session is past limits.maxContextChars's compaction point"
	case s.NextAction == "reduce":
		return "trims the largest kept tool outputs in place to fit the limit"
	}
	return "sends as is"
}
