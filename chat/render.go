package chat

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// styles are the chat's colours; with NO_COLOR (or a terminal without colour) lipgloss draws them plain.
type styles struct {
	user, dim, ok, failed, warn, meter, approval lipgloss.Style
}

func newStyles() styles {
	return styles{
		user:     lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		dim:      lipgloss.NewStyle().Foreground(lipgloss.Color("8")),
		ok:       lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		failed:   lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		warn:     lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
		meter:    lipgloss.NewStyle().Reverse(true),
		approval: lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("3")).Padding(0, 1),
	}
}

// toolCall is one tool call of the turn, folded to one line.
type toolCall struct {
	id, name, args string
	done, failed   bool
	declined       bool   // it did not run: the user did not approve it
	stopped        bool   // the turn ended without its result
	verdict        string // the user's answer when it asked ("allowed", "declined"…)
	reason         string // what a failed or declined call's result says (a stored session's calls)
	chars          int
	exitCode       *int
}

// line is the call as one line: its status mark (spin while it runs), name, main argument, the user's verdict,
// and once done its output's size and a command's exit code.
func (c toolCall) line(spin string, st styles) string {
	mark := spin
	switch {
	case c.declined:
		mark = st.dim.Render("⊘")
	case c.failed:
		mark = st.failed.Render("✗")
	case c.done:
		mark = st.ok.Render("✓")
	case c.stopped:
		mark = st.warn.Render("■")
	}
	s := fmt.Sprintf("%s %s %s", mark, c.name, clip(mainArgument(c.args), 70))
	var extra []string
	if c.verdict != "" {
		extra = append(extra, c.verdict)
	}
	refused := c.verdict != "" && c.verdict != "allowed" // its result only says so
	switch {
	case (c.failed || c.declined) && c.reason != "":
		extra = append(extra, clip(c.reason, 60))
	case c.done && refused:
	case c.done:
		if c.exitCode != nil {
			extra = append(extra, fmt.Sprintf("exit %d", *c.exitCode))
		}
		extra = append(extra, api.Human(c.chars)+" chars")
	case c.stopped && (c.verdict == "" || c.verdict == "allowed"):
		extra = append(extra, "stopped before it finished")
	}
	if len(extra) > 0 {
		s += st.dim.Render(" · " + strings.Join(extra, " · "))
	}
	return s
}

// mainArgument is what names a call best: its command, path, pattern or query, else its arguments as sent.
func mainArgument(args string) string {
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return oneLine(args)
	}
	for _, k := range []string{"command", "pattern", "query", "path", "file", "url", "name"} {
		if v, ok := m[k].(string); ok && v != "" {
			return oneLine(v)
		}
	}
	return oneLine(args)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n < 1:
		return ""
	}
	return string(r[:n-1]) + "…"
}

// meterLine is the status line: how full the request is against the limit that compacts it, whether a
// compaction runs or what the next call does, the prompt cache, then the session; what the width cannot hold
// is left out from the end.
func meterLine(st *api.Status, session, title string, width int, sty styles) string {
	var parts []string
	if st != nil && st.LimitTokens > 0 {
		frac := float64(st.Tokens) / float64(st.LimitTokens)
		parts = append(parts, fmt.Sprintf("%s %s/%s tokens (%.0f%%)", bar(frac, 10), api.Human(st.Tokens), api.Human(st.LimitTokens), 100*frac))
		switch {
		case st.Compacting:
			parts = append(parts, "compacting…")
		case st.CompactingInBackground:
			parts = append(parts, "summarizing in the background")
		case strings.HasPrefix(st.NextAction, "compact") && st.Auto:
			parts = append(parts, "compacts before the next call")
		case st.NextAction == "reduce":
			parts = append(parts, "trims tool outputs before the next call")
		default:
			parts = append(parts, fmt.Sprintf("compacts at %.0f%%", 100*st.CompactsAt))
		}
		if st.Cache != nil && st.Cache.LastInput > 0 {
			parts = append(parts, fmt.Sprintf("cache %.0f%%", 100*float64(st.Cache.LastCached)/float64(st.Cache.LastInput)))
		}
	}
	// The figures come first (a narrow terminal loses the session's label, not how full the request is); the
	// label is cut to the room they leave, down to its ID.
	label, short := "new session", "new session"
	if session != "" {
		short = "session " + shortID(session)
		label = short
		if title != "" {
			label += " " + clip(title, 60) // cut again to the room the figures leave
		}
	}
	line := ""
	for i, p := range parts {
		next := " · " + p
		if i == 0 {
			next = " " + p
		} else if lipgloss.Width(line+next) > width {
			break
		}
		line += next
	}
	if room := width - lipgloss.Width(line) - len(" · "); room >= lipgloss.Width(short) {
		line += " · " + clip(label, room)
	} else if line == "" {
		line = " " + label
	}
	return sty.meter.Width(width).Render(clip(line, width))
}

// bar draws frac (0–1, more is clipped) in n cells.
func bar(frac float64, n int) string {
	full := int(frac*float64(n) + 0.5)
	full = max(0, min(n, full))
	return strings.Repeat("▰", full) + strings.Repeat("▱", n-full)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// uniqueIDs are the shortest prefixes, from 8 characters, that tell each of ids from the others (IDs made
// within a minute share their first 8).
func uniqueIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		n := min(8, len(id))
		for _, other := range ids {
			for other != id && n < len(id) && strings.HasPrefix(other, id[:n]) {
				n++
			}
		}
		out[i] = id[:n]
	}
	return out
}

// contextView is /context at width columns: the parts of the transcript, largest first, the instructions and
// tools beside them, and the meter in full. A row's name is cut to what the width leaves its figure.
func contextView(parts []agent.ContextPart, st *api.Status, width int) string {
	nameWidth := min(34, max(12, width-18))
	row := func(b *strings.Builder, indent int, name string, chars int) {
		fmt.Fprintf(b, "%s%-*s %8s chars\n", strings.Repeat(" ", indent), nameWidth+2-indent, clip(name, nameWidth+2-indent), api.Human(chars))
	}
	var b strings.Builder
	if st != nil {
		source := "estimated at about 4 chars a token"
		if st.TokensSource == "calibrated" {
			source = "calibrated from the provider's counts"
		}
		of := "session " + shortID(st.Session)
		if st.Session == "" {
			of = "this new session (nothing sent yet)"
		}
		fmt.Fprintf(&b, "Context of %s: %s of %s tokens (%s).\n", of, api.Human(st.Tokens), api.Human(st.LimitTokens), source)
		fmt.Fprintf(&b, "%s.\n", capitalize(st.CompactsAtText))
		if !strings.HasPrefix(st.WindowSource, "maxContextChars") {
			fmt.Fprintf(&b, "The window is %s tokens, %s.\n", api.Human(st.Window), api.WindowFrom(st.WindowSource))
		}
		row(&b, 2, "instructions", st.InstructionsChars)
		if st.Rules != nil {
			row(&b, 4, "project rules ("+clip(st.Rules.File, 14)+")", st.Rules.Chars)
		}
		row(&b, 2, "tool catalog", st.ToolsChars)
	}
	sorted := append([]agent.ContextPart(nil), parts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Chars > sorted[j].Chars })
	for _, p := range sorted {
		if p.Chars == 0 {
			continue
		}
		row(&b, 2, p.Name, p.Chars)
	}
	if st != nil {
		fmt.Fprintf(&b, "Next model call: %s.", api.NextCall(st.Status))
		if st.Cache != nil {
			fmt.Fprintf(&b, "\n%s.", capitalize(strings.TrimSuffix(st.Cache.Text, ".")))
		}
		for _, n := range st.Notices {
			fmt.Fprintf(&b, "\n%s", n.Text)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// mcpsView is /mcps: every MCP server with its tool count and size, and what is wrong with one.
func mcpsView(d api.ToolsResult) string {
	var b strings.Builder
	servers := 0
	for _, s := range d.Sources {
		if s.Source == "built-in" {
			continue
		}
		servers++
		fmt.Fprintf(&b, "  %-24s %3d tools  %8s chars", s.Source, s.Count, api.Human(s.Chars))
		if s.Problem != "" {
			fmt.Fprintf(&b, "  — %s", s.Problem)
		}
		b.WriteString("\n")
	}
	if servers == 0 {
		return "No MCP servers are configured (mcpServers in the config file; README, Configuration). The built-in tools: " + builtinNames(d) + "."
	}
	return fmt.Sprintf("MCP servers (the whole tool catalog is %s chars):\n%sTurn one off with mcpServers.NAME.disabled in the config file.", api.Human(d.CatalogChars), b.String())
}

func builtinNames(d api.ToolsResult) string {
	for _, s := range d.Sources {
		if s.Source == "built-in" {
			return strings.Join(s.Tools, ", ")
		}
	}
	return "none"
}

// pluginsView is /plugins: the compaction plugins and the built-in memory, on or off for this chat.
func pluginsView(plugins []config.Plugin, memory bool) string {
	var b strings.Builder
	state := func(on bool) string {
		if on {
			return "on"
		}
		return "off"
	}
	b.WriteString("Compaction plugins, on or off for this chat:\n")
	fmt.Fprintf(&b, "  %-24s %s (built-in: durable memories saved at each compaction)\n", "memory", state(memory))
	for _, p := range plugins {
		fmt.Fprintf(&b, "  %-24s %s (%s)\n", p.Name, state(!p.Disabled), clip(strings.Join(append([]string{p.Command}, p.Args...), " "), 50))
	}
	b.WriteString("/plugins disable NAME or /plugins enable NAME changes one for this chat; plugins in the config file are added there (docs/plugins.md).")
	return b.String()
}

// sessionsView is /sessions: the workspace's sessions, numbered for /sessions N, the current one marked.
func sessionsView(list []api.SessionSummary, current string, now time.Time) string {
	if len(list) == 0 {
		return "This workspace has no sessions yet: what you send starts one."
	}
	var b strings.Builder
	ids := make([]string, len(list))
	for i, s := range list {
		ids[i] = s.ID
	}
	ids = uniqueIDs(ids)
	width := 0
	for _, id := range ids {
		width = max(width, len(id))
	}
	for i, s := range list {
		mark := " "
		if s.ID == current {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %2d  %-*s  %-40s %4d messages  %s ago\n", mark, i+1, width, ids[i], clip(s.Title, 40), s.Messages, shortDuration(now.Sub(s.UpdatedAt)))
	}
	b.WriteString("/sessions N (or an ID) switches to one; /new starts one.")
	return b.String()
}

// shortDuration is d in one unit: seconds under a minute, minutes under an hour, hours under two days, else
// days ("42s", "10m", "30h", "3d").
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// approvalView is the question of a call waiting for the user: what it writes or runs.
func approvalView(a api.ApproveParams, width int, sty styles) string {
	var b strings.Builder
	switch a.Kind {
	case api.ApproveEdit:
		verb := "create"
		if a.Exists {
			verb = "overwrite"
		}
		if a.Call.Name == "edit_file" {
			verb = "edit"
		}
		fmt.Fprintf(&b, "The agent wants to %s %s:\n", verb, a.Path)
		lines := strings.Split(a.NewText, "\n")
		for i, l := range lines {
			if i == 12 {
				fmt.Fprintf(&b, "  … %d more lines\n", len(lines)-12)
				break
			}
			fmt.Fprintf(&b, "  %s\n", clip(l, max(20, width-8)))
		}
	default:
		fmt.Fprintf(&b, "The agent wants to run:\n  %s\n", clip(a.Command, max(20, width-8)*3))
	}
	fmt.Fprintf(&b, "y: allow · n: decline (in %s it counts as declined)", shortDuration(time.Duration(a.TimeoutSeconds)*time.Second))
	return sty.approval.Width(max(20, width-2)).Render(b.String())
}
