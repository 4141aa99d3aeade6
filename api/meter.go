package api

import (
	"strings"

	"github.com/alisio-lsp/alisio-lsp/agent"
)

// Meter is the meter in the user's units: the tokens the next request holds — one figure, and where it comes
// from — of the limit that compaction's threshold is a share of.
type Meter struct {
	// Tokens is the request's size in tokens: calibrated from the provider's own counts when it has reported
	// some, else estimated at about 4 chars a token (TokensSource says which).
	Tokens       int    `json:"tokens"`
	TokensSource string `json:"tokensSource"`
	// LimitTokens is the limit of the rule closest to firing: the model's window, or limits.maxContextChars
	// (and the tool catalog sent beside it) in tokens at the request's chars per token. Compaction starts at
	// about Threshold of it.
	LimitTokens int `json:"limitTokens"`
}

// MeterOf is st's meter in tokens.
func MeterOf(st agent.Status) Meter {
	m := Meter{Tokens: st.EstimatedTokens, TokensSource: "estimated"}
	if st.LastReportedTokens > 0 && st.CalibratedTokens > 0 {
		m.Tokens, m.TokensSource = st.CalibratedTokens, "calibrated"
	}
	windowKnown := st.Window > 0 && !strings.HasPrefix(st.WindowSource, "maxContextChars")
	switch {
	case windowKnown && st.WindowFraction >= st.CharsFraction:
		m.LimitTokens = st.Window
	case st.UsedChars+st.ToolsChars > 0 && m.Tokens > 0:
		// The hard limit and the tool catalog sent beside it, at the request's chars per token: a limit that
		// stays put while the conversation grows (the catalog's share of the request shrinks).
		m.LimitTokens = int(int64(st.HardLimit+st.ToolsChars) * int64(m.Tokens) / int64(st.UsedChars+st.ToolsChars))
	default:
		m.LimitTokens = st.HardLimit / 4
	}
	return m
}
