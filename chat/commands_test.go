package chat

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

func TestParseCommand(t *testing.T) {
	for _, c := range []struct {
		line, name, arg, err string
	}{
		{"hello there", "", "hello there", ""},
		{"  two\nlines  ", "", "  two\nlines", ""},
		{"/compact keep the parser work", "compact", "keep the parser work", ""},
		{"/COMPACT", "compact", "", ""},
		{"/settings limits.maxContextChars 60000", "settings", "limits.maxContextChars 60000", ""},
		{"/quit", "exit", "", ""},
		{"//etc/hosts is odd", "", "/etc/hosts is odd", ""},
		{"/sessoins", "", "", "did you mean /sessions?"},
		{"/comp", "", "", "did you mean /compact?"},
		{"/zzzzzzzz", "", "", "unknown command /zzzzzzzz (/help"},
		{"   ", "", "", "nothing to send"},
		{"/undo extra", "", "", `/undo takes nothing after it ("extra" was given`},
	} {
		got, err := ParseCommand(c.line)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.line, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.line, err)
		case c.err == "" && (got.Name != c.name || got.Arg != c.arg):
			t.Errorf("%q: %+v, want %q %q", c.line, got, c.name, c.arg)
		}
	}
}

// FuzzParseCommand: any line is a prompt that keeps its text, a known command, or an error that says what to do;
// never a panic.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"hi", "/compact x", "//x", "/", "/ /", "/\xff", "  /help  ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := ParseCommand(line)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), "/help") {
				t.Fatalf("%q: the error does not point to /help: %v", line, err)
			}
		case c.Name == "":
			if strings.TrimSpace(c.Arg) == "" || !strings.Contains(line, strings.TrimSpace(c.Arg)) {
				t.Fatalf("%q: the prompt %q is not the line's text", line, c.Arg)
			}
		default:
			if !strings.Contains(helpView(100), "/"+c.Name) {
				t.Fatalf("%q: %q is not a listed command", line, c.Name)
			}
		}
	})
}

func TestOverrides(t *testing.T) {
	o := Overrides{}
	for _, kv := range [][2]string{{"limits.maxContextChars", "60000"}, {"compaction.threshold", "0.7"}, {"compaction.auto", "false"},
		{"provider.model", "gpt-test"}, {"tools.approval", "auto"}} {
		if err := o.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Overlay(config.Default(), o.JSON(), "test")
	if err != nil {
		t.Fatalf("the overrides are not a valid overlay: %v\n%s", err, o.JSON())
	}
	if cfg.Limits.MaxContextChars != 60000 || cfg.Compaction.Threshold != 0.7 || cfg.Compaction.Auto || cfg.Provider.Model != "gpt-test" || cfg.Tools.Approval != "auto" {
		t.Fatalf("overlay %s gave %+v", o.JSON(), cfg)
	}
	if err := o.Set("compaction.auto", ""); err != nil || len(o) != 4 {
		t.Fatalf("dropping a key: %v, %v", err, o)
	}
	for _, bad := range []string{"", ".x", "x.", "a..b"} {
		if err := o.Set(bad, "1"); err == nil {
			t.Errorf("%q accepted as a key", bad)
		}
	}
	if err := o.Set("limits.bogus", "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := config.Overlay(config.Default(), o.JSON(), "/settings"); err == nil || !strings.Contains(err.Error(), "bogus") {
		t.Fatalf("an unknown setting was not refused by name: %v", err)
	}
}

func TestRender(t *testing.T) {
	sty := newStyles()
	code := 2
	line := toolCall{name: "run_command", args: `{"command":"go   test ./..."}`, done: true, failed: true, chars: 1234, exitCode: &code}.line("*", sty)
	for _, want := range []string{"✗", "run_command go test ./...", "exit 2", "1.2k chars"} {
		if !strings.Contains(line, want) {
			t.Errorf("the tool line %q lacks %q", line, want)
		}
	}
	// A running call's name starts where a finished one's does: the spinner's frame is one cell, like ✓.
	running := toolCall{name: "run_command", args: `{"command":"sleep 20"}`}.line(newModel(context.Background(), nil, Options{}).spin.View(), sty)
	if at, want := lipgloss.Width(running[:strings.Index(running, "run_command")]), lipgloss.Width(line[:strings.Index(line, "run_command")]); at != want {
		t.Errorf("a running call's name starts at column %d, a finished one's at %d: %q", at, want, running)
	}
	if got := mainArgument(`{"pattern":"TODO","path":"."}`); got != "TODO" {
		t.Errorf("a search is named by %q, want its pattern", got)
	}
	st := &api.Status{Meter: api.Meter{Tokens: 30_000, LimitTokens: 100_000}}
	st.Threshold, st.NextAction, st.Auto = 0.85, "compact (window)", true
	for _, width := range []int{0, 1, 10, 40, 70, 90, 100, 200} {
		m := meterLine(st, "0123456789abcdef", "a title", width, sty)
		if w := lipgloss.Width(m); width > 0 && w != width {
			t.Errorf("the meter is %d cells wide in %d: %q", w, width, m)
		}
		// The figures come first: a narrow terminal loses the session's name, not how full the request is.
		if width >= 40 && !strings.Contains(m, "30k/100k tokens (30%)") || width >= 70 && !strings.Contains(m, "compacts before the next call") ||
			width >= 90 && !strings.Contains(m, "session 01234567 a") || width >= 120 && !strings.Contains(m, "session 01234567 a title") ||
			strings.Contains(m, "· session 0123456…") {
			t.Errorf("meter at %d: %q", width, m)
		}
	}
	// A window too small to keep the reply's room up to the threshold: the meter names the point that fires.
	small := &api.Status{Meter: api.Meter{Tokens: 3_000, LimitTokens: 16_384, CompactsAt: 0.75}}
	small.Threshold, small.NextAction = 0.85, "none"
	if m := meterLine(small, "", "", 120, sty); !strings.Contains(m, "compacts at 75%") {
		t.Errorf("small window's meter: %q", m)
	}
	ctxSt := &api.Status{Status: agent.Status{Session: "0123456789", InstructionsChars: 290, ToolsChars: 2800}}
	ctxParts := []agent.ContextPart{{Name: "tool output: search (a very long name of a part that goes on)", Chars: 7000}, {Name: "user text", Chars: 87}}
	for _, width := range []int{50, 80, 120} {
		for _, l := range strings.Split(contextView(ctxParts, ctxSt, width), "\n") {
			if strings.HasSuffix(l, " chars") && lipgloss.Width(l) > width {
				t.Errorf("/context at %d columns: a row is %d wide: %q", width, lipgloss.Width(l), l)
			}
		}
	}
	if v := contextView(ctxParts, ctxSt, 120); !strings.Contains(v, "tool output: search") || strings.Index(v, "tool output") > strings.Index(v, "user text") {
		t.Errorf("/context, largest part first:\n%s", v)
	}
	if got := uniqueIDs([]string{"01a2492f77aa", "01a2492f78bb", "01b00000cc"}); strings.Join(got, " ") != "01a2492f77 01a2492f78 01b00000" {
		t.Errorf("session IDs told apart as %v", got)
	}
	list := sessionsView([]api.SessionSummary{{ID: "01a2492f77aa", Title: "one"}, {ID: "01a2492f78bb", Title: "two"}}, "01a2492f77aa", time.Now())
	if !strings.Contains(list, "*  1  01a2492f77  one") || !strings.Contains(list, "   2  01a2492f78  two") {
		t.Errorf("/sessions:\n%s", list)
	}
	if l := (toolCall{name: "write_file", done: true, declined: true, verdict: "declined", chars: 126}).line("*", sty); strings.Contains(l, "chars") ||
		!strings.Contains(l, "⊘ write_file") {
		t.Errorf("a declined call's line shows the size of its refusal, or no ⊘: %q", l)
	}
	stored := toolCall{name: "run_command", args: `{"command":"rm -rf build"}`, done: true, declined: true, reason: "The user declined this command; it was not run."}.line("*", sty)
	if !strings.Contains(stored, "⊘ run_command rm -rf build") || !strings.Contains(stored, "The user declined this command") || strings.Contains(stored, "✗") {
		t.Errorf("a stored declined call, drawn as a failure or without its reason: %q", stored)
	}
	stopped := toolCall{name: "run_command", args: `{"command":"sleep 60"}`, stopped: true, verdict: "allowed"}.line("*", sty)
	if !strings.Contains(stopped, "■ run_command sleep 60") || !strings.Contains(stopped, "allowed · stopped before it finished") {
		t.Errorf("a call the turn stopped: %q", stopped)
	}
	// /help in a narrow terminal: every description line is indented under its usage, none at column 0.
	narrow := helpView(50)
	for _, l := range strings.Split(narrow[strings.Index(narrow, "\n/"):], "\n")[1:] {
		if !strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "    ") {
			t.Errorf("a /help line at column 0 in 50 columns: %q", l)
		}
	}
	if !strings.Contains(narrow, "message):") {
		t.Errorf("the /help heading was cut in 50 columns:\n%s", narrow)
	}
	for _, l := range strings.Split(helpView(100), "\n")[1:] {
		if w := lipgloss.Width(l); w > 100 || !strings.HasPrefix(l, "/") && !strings.HasPrefix(l, strings.Repeat(" ", 33)) {
			t.Errorf("a /help line out of its column in 100 columns: %q", l)
		}
	}
	if got := clip("ñandú", 3); got != "ña…" || !utf8.ValidString(got) {
		t.Errorf("clip %q", got)
	}
	view := approvalView(api.ApproveParams{Kind: api.ApproveCommand, Command: "rm -rf build", TimeoutSeconds: 600}, 80, sty)
	if !strings.Contains(view, "rm -rf build") || !strings.Contains(view, "y: allow") || !strings.Contains(view, "in 10m it counts") {
		t.Errorf("approval %q", view)
	}
	var d api.ToolsResult
	_ = json.Unmarshal([]byte(`{"sources":[{"source":"built-in","count":2,"tools":["read_file","recall"]},{"source":"github","count":40,"chars":52000,"problem":"3 tools left out"}],"catalogChars":60000}`), &d)
	if v := mcpsView(d); !strings.Contains(v, "github") || !strings.Contains(v, "40 tools") || !strings.Contains(v, "3 tools left out") {
		t.Errorf("mcps %q", v)
	}
}

// TestNotice: a notice longer than the terminal is wide is read whole (wrapped, up to three lines), and the
// screen keeps its height.
func TestNotice(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(50, 20)
	m.notice = "the workspace /home/someone/projects/a-long-name does not exist: give an existing project folder with --workspace"
	screen := m.View()
	flat := strings.Join(strings.Fields(screen), " ")
	if !strings.Contains(flat, "give an existing project folder with --workspace") {
		t.Errorf("the notice was cut at 50 columns:\n%s", screen)
	}
	if h := lipgloss.Height(screen); h != 20 {
		t.Errorf("the screen is %d lines high in a 20-line terminal", h)
	}
	m.notice = strings.Repeat("word ", 100)
	if got := lipgloss.Height(m.noticeView()); got != maxNoticeLines {
		t.Errorf("a very long notice takes %d lines", got)
	}
	if h := lipgloss.Height(m.View()); h != 20 {
		t.Errorf("with a very long notice the screen is %d lines high", h)
	}
	// Typing ends a notice about what was typed.
	m.notice = "unknown command /frobnicate"
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	if m.notice != "" || m.input.Value() != "x" {
		t.Errorf("after typing, the notice is %q and the input %q", m.notice, m.input.Value())
	}
}

// TestCtrlCAfterSending: a Ctrl-C at idle, then a prompt sent within the leave window, then Ctrl-C stops the
// turn; it does not leave the chat with the turn running.
func TestCtrlCAfterSending(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(80, 20)
	m.stop()
	if m.quitting {
		t.Fatal("one Ctrl-C at idle left the chat")
	}
	m.input.SetValue("armed then interrupt")
	m.send()
	if m.busy != "turn" {
		t.Fatalf("the prompt did not start a turn (busy %q)", m.busy)
	}
	m.stop()
	if m.quitting || !m.stopping {
		t.Errorf("Ctrl-C during the turn just sent: quitting %v, stopping %v", m.quitting, m.stopping)
	}
}

// TestNothingSentYet: in a session nothing was sent in, /compact, /undo and /checkpoint say so in the
// conversation (where it stays), and /context does not name an empty session.
func TestNothingSentYet(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(100, 30)
	for _, line := range []string{"/compact", "/undo", "/checkpoint"} {
		m.input.SetValue(line)
		if m.send() != nil || m.busy != "" {
			t.Errorf("%s in a new session started work (busy %q)", line, m.busy)
		}
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
		m.input.Reset()
		if flat := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(flat, line+": this session has no messages yet") {
			t.Errorf("%s in a new session did not say why it does nothing:\n%s", line, m.View())
		}
	}
	view := contextView(nil, &api.Status{Meter: api.Meter{LimitTokens: 1000}}, 100)
	if strings.Contains(view, "session :") || !strings.Contains(view, "this new session") {
		t.Errorf("/context before the first message: %q", view)
	}
}

// TestKeysWhileAsked: while a question waits for y or n, another key is not lost without a word: the notice
// says what the question takes; PgUp still scrolls back, and the input keeps nothing typed meanwhile.
func TestKeysWhileAsked(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(80, 20)
	m.approvals = []Approval{{ApproveParams: api.ApproveParams{Kind: api.ApproveCommand, Command: "go test ./..."}}}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("h")})
	if !strings.Contains(m.notice, "y allows, n declines") || m.input.Value() != "" || len(m.approvals) != 1 {
		t.Errorf("a key while asked: notice %q, input %q, %d questions", m.notice, m.input.Value(), len(m.approvals))
	}
	if _, handled := m.key(tea.KeyMsg{Type: tea.KeyPgUp}); !handled || len(m.approvals) != 1 {
		t.Errorf("PgUp while asked: handled %v, %d questions", handled, len(m.approvals))
	}
	if !strings.Contains(m.View(), "y allows, n declines") {
		t.Errorf("the notice is not on screen:\n%s", m.View())
	}
}

// TestTextArrivingAtOnce: characters that arrive together are text, even when they spell a key's name
// ("delete", "enter", "up"): over a slow link a typed word comes in one read.
func TestTextArrivingAtOnce(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(80, 20)
	for _, word := range []string{"/memories", " ", "delete", " ", "1", " ", "enter", " ", "up", " ", "ctrl+d"} {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(word)})
	}
	if got := m.input.Value(); got != "/memories delete 1 enter up ctrl+d" || m.quitting {
		t.Errorf("the input holds %q (quitting %v)", got, m.quitting)
	}
}

// TestCommandErrorsStay: a slash command refused after it was sent (its line is gone from the input) answers
// in the conversation, where it stays, not only in the notice the next key clears.
func TestCommandErrorsStay(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(80, 20)
	for _, line := range []string{"/plugins enable nosuch", "/plugins frob", "/settings no.such 1"} {
		m.input.SetValue(line)
		m.send()
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x")})
	}
	view := m.View()
	for _, want := range []string{`no plugin is named "nosuch"`, "use /plugins enable NAME", "no.such"} {
		if !strings.Contains(view, want) {
			t.Errorf("after the refused commands and a key, %q is not on screen:\n%s", want, view)
		}
	}
}

// TestSettingsDropUnchanged: /settings KEY for a key this chat did not change says so, rather than that the
// key is back to the config file's value; for one it changed, it drops the change.
func TestSettingsDropUnchanged(t *testing.T) {
	m := newModel(context.Background(), nil, Options{Config: config.Default()})
	m.resize(120, 30)
	m.input.SetValue("/settings compaction.threshold")
	if m.send() != nil {
		t.Error("dropping a change never made sent the settings")
	}
	if flat := strings.Join(strings.Fields(m.View()), " "); !strings.Contains(flat, "compaction.threshold was not changed by this chat") {
		t.Errorf("the answer:\n%s", m.View())
	}
	m.overrides["compaction.threshold"] = 0.7
	m.input.SetValue("/settings compaction.threshold")
	if m.send() == nil || len(m.overrides) != 0 {
		t.Errorf("a change made was not dropped: %v", m.overrides)
	}
}

// TestRewrittenElsewhere: a meter whose epoch is later than the one drawn means another window or the CLI
// rewrote the session, and the chat reads it again, once; not for its own turn or command (nor a meter that
// arrives before that work's own status read), nor for messages appended without a rewrite (a stopped turn's
// cancelled calls).
func TestRewrittenElsewhere(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.session = "s1"
	m.Update(statusMsg{&api.Status{Status: agent.Status{Session: "s1", Messages: 12, Epoch: 2}}})
	meter := func(messages int, epoch uint64) tea.Cmd {
		return m.incoming(api.Status{Status: agent.Status{Session: "s1", Messages: messages, Epoch: epoch}})
	}
	if meter(14, 2) != nil {
		t.Error("messages appended without a rewrite read the session again")
	}
	if m.incoming(api.Status{Status: agent.Status{Session: "other", Epoch: 9}}) != nil {
		t.Error("another session's meter read this one again")
	}
	m.busy = "compaction"
	if meter(4, 3) != nil {
		t.Error("the chat's own compaction read the session again")
	}
	m.Update(commandDoneMsg{text: "compacted"})
	if meter(4, 3) != nil {
		t.Error("the chat's own compaction read the session again after it ended")
	}
	m.Update(statusMsg{&api.Status{Status: agent.Status{Session: "s1", Messages: 4, Epoch: 3}}})
	if meter(5, 4) == nil {
		t.Fatal("an undo made elsewhere (epoch 3 → 4) was not noticed")
	}
	if meter(5, 4) != nil || meter(5, 3) != nil {
		t.Error("the same change, or an older meter, read the session again")
	}
	// A turn run in another window or on the command line appends without a rewrite: the meter says it
	// was written elsewhere, and the chat reads it again when the count of messages changed.
	m.busy = ""
	elsewhere := func(messages int) tea.Cmd {
		return m.incoming(api.Status{Status: agent.Status{Session: "s1", Messages: messages, Epoch: 4}, ChangedElsewhere: true})
	}
	if elsewhere(5) != nil {
		t.Error("a command line command that wrote nothing of this session read it again")
	}
	if elsewhere(7) == nil {
		t.Fatal("a turn run elsewhere (5 → 7 messages) was not noticed")
	}
	m.busy = "turn"
	if elsewhere(9) != nil {
		t.Error("a meter said written elsewhere read the session again during the chat's own turn")
	}
	m.busy = ""
	if meter(11, 4) != nil {
		t.Error("the chat's own messages read the session again")
	}
}

// TestMergeSettings: /settings go over the chat's config file key by key; an empty file gives the changes.
func TestMergeSettings(t *testing.T) {
	got := string(mergeSettings(json.RawMessage(`{"provider":{"kind":"openai","model":"a"},"limits":{"maxContextChars":9000}}`),
		json.RawMessage(`{"limits":{"maxOutputTokens":8192},"provider":{"model":"b"}}`)))
	if want := `{"limits":{"maxContextChars":9000,"maxOutputTokens":8192},"provider":{"kind":"openai","model":"b"}}`; got != want {
		t.Errorf("merged %s, want %s", got, want)
	}
	if got := string(mergeSettings(nil, json.RawMessage(`{"a":1}`))); got != `{"a":1}` {
		t.Errorf("no file: %s", got)
	}
}

// TestStreamedReplyDoesNotMove: a reply is wrapped where it streams as the finished reply is, so that its
// lines do not move when it settles into markdown.
func TestStreamedReplyDoesNotMove(t *testing.T) {
	text := "The entry point calls greet with the name it was given, which formats the greeting and returns it; the tests cover the empty name, a name with spaces, and a very long name that is cut at forty characters, so nothing else needs a change before the flag."
	lines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(regexp.MustCompile(`\x1b\[[0-9;]*m`).ReplaceAllString(s, ""), "\n") {
			out = append(out, strings.TrimRight(l, " "))
		}
		return out
	}
	for _, width := range []int{60, 80, 100, 160} {
		m := newModel(context.Background(), nil, Options{})
		m.resize(width, 30)
		var b strings.Builder
		b.WriteString(text)
		turn := []segment{{text: &b}}
		streamed, final := lines(m.drawSegments(turn, false)), lines(m.drawSegments(turn, true))
		if strings.Join(streamed, "\n") != strings.Join(final, "\n") {
			t.Errorf("at %d columns the reply moves when it settles:\nstreamed:\n%s\nfinished:\n%s", width, strings.Join(streamed, "\n"), strings.Join(final, "\n"))
		}
	}
}

// TestCheckpointRedrawnAtEachWidth: the checkpoint /checkpoint shows is markdown drawn again when the terminal
// is resized, not its drawing at the width it was read at, wrapped again (which left lines at column 0).
func TestCheckpointRedrawnAtEachWidth(t *testing.T) {
	cp := compaction.Checkpoint{Goal: "Add a flag for the greeting's language, default English, with a table test for each language we support now.",
		Instructions: []string{"Keep the public API as it is; the release notes say so and the users of the library depend on it."}, Replaced: 5}
	read := checkpointMsg{res: api.CheckpointResult{Session: "s1", Checkpoint: &cp, Text: cp.Render(), ReplacedMessages: 5}}
	at := func(widths ...int) string {
		m := newModel(context.Background(), nil, Options{})
		m.session = "s1"
		m.resize(widths[0], 40)
		m.checkpointRead(read)
		for _, w := range widths[1:] {
			m.resize(w, 40)
		}
		return m.drawn
	}
	for _, w := range []int{80, 100, 200} {
		if resized, direct := at(160, w), at(w); resized != direct {
			t.Errorf("the checkpoint read at 160 columns, then drawn at %d:\n%s\nread at %d:\n%s", w, resized, w, direct)
		}
	}
}

// TestTurnDrawnAsReadBack: a finished turn is drawn as the same turn read back from the store: a blank line
// above the text that follows a call.
func TestTurnDrawnAsReadBack(t *testing.T) {
	m := newModel(context.Background(), nil, Options{})
	m.resize(100, 30)
	text := func(s string) *strings.Builder { b := &strings.Builder{}; b.WriteString(s); return b }
	call := transcript.ToolCall{ID: "c1", Name: "list_dir", Arguments: `{"path":"."}`}
	live := m.drawSegments([]segment{{text: text("Looking around.")}, {call: &toolCall{id: call.ID, name: call.Name, args: call.Arguments}}, {text: text("Two files.")}}, true)
	first, _ := m.storedBlock(api.PageMessage{Message: transcript.Message{Role: "assistant", Text: "Looking around.", ToolCalls: []transcript.ToolCall{call}}}, nil)
	second, _ := m.storedBlock(api.PageMessage{Message: transcript.Message{Role: "assistant", Text: "Two files."}}, nil)
	if stored := m.draw(first) + "\n\n" + m.draw(second); live != stored {
		t.Errorf("drawn live:\n%s\nread back:\n%s", live, stored)
	}
}
