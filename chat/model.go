package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textarea"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/glamour/ansi"
	glamourstyles "github.com/charmbracelet/glamour/styles"
	"github.com/charmbracelet/lipgloss"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// Options are what `alisio-lsp chat` was asked for.
type Options struct {
	// Session continues this session; "" the workspace's most recent one, unless New.
	Session string
	New     bool
	// Config is the configuration the chat runs with as this process reads it: its plugins for /plugins, and
	// the base /settings are checked against.
	Config config.Config
	// Settings, when the chat was given a config file, is that file's JSON: the chat's settings over those of
	// the shared daemon, which another window may have started with another file (/settings go over both).
	Settings json.RawMessage
	// In and Out are the terminal.
	In  io.Reader
	Out io.Writer
	// Resume is the command line that runs the chat again, with the flags it was given (its data directory,
	// configuration, workspace); leaving prints it with `--session` and the session's ID.
	Resume string
}

// maxBlocks bounds what the conversation keeps drawn.
const maxBlocks = 400

// leaveWindow is how soon a second Ctrl-C leaves the chat.
const leaveWindow = 3 * time.Second

// Run runs the chat on client until the user leaves. A request still running then is stopped.
func Run(ctx context.Context, client *Client, opts Options) error {
	m := newModel(ctx, client, opts)
	if len(opts.Settings) > 0 {
		// Sent before anything else, so that the first request already runs with them.
		if err := m.sendSettings(ctx); err != nil {
			return fmt.Errorf("giving the shared daemon this chat's config file: %w", err)
		}
	}
	p := tea.NewProgram(m, tea.WithInput(opts.In), tea.WithOutput(opts.Out), tea.WithAltScreen(), tea.WithContext(ctx))
	final, err := p.Run()
	if fm, ok := final.(*model); ok {
		if fm.cancel != nil {
			fm.cancel()
		}
		if fm.session != "" {
			resume := opts.Resume
			if resume == "" {
				resume = "alisio-lsp chat"
			}
			fmt.Fprintf(opts.Out, "The session is kept: `%s --session %s` continues it.\n", resume, fm.session)
		}
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // the terminal closed, or the process was told to stop
	}
	return err
}

// model is the chat's state: the conversation as drawn, the running turn, the input, the meter.
type model struct {
	ctx    context.Context
	client *Client
	opts   Options
	sty    styles
	md     *glamour.TermRenderer

	width, height int
	input         textarea.Model
	view          viewport.Model
	spin          spinner.Model

	blocks   []block   // what is drawn above the running turn
	drawn    string    // blocks drawn at the width
	follow   bool      // the conversation follows its end (false once the user scrolled up)
	turn     []segment // the running turn
	busy     string    // what runs: "" (nothing), "turn", "compaction", or the command's name
	cancel   context.CancelFunc
	stopping bool // the user stopped what runs

	session, title string
	status         *api.Status
	// drawnEpoch is the view epoch of the session as drawn here. adopt is set from the end of this chat's own
	// work (opening the session, a turn, /compact, /undo…) until its own status read answers: the epoch that
	// read reports is this chat's doing. Otherwise a meter with a later epoch means another window or the CLI
	// rewrote the session (a compaction, an undo, a checkpoint edit), and the conversation is read again.
	drawnEpoch uint64
	adopt      bool
	approvals  []Approval

	history  []string // what was sent, oldest first
	histPos  int      // len(history) when not browsing
	draft    string   // the input before browsing the history
	notice   string   // one line above the input
	lastStop time.Time
	quitting bool

	overrides Overrides
	plugins   []config.Plugin
	memory    bool
	// checkpointDrafts are the checkpoint edits the daemon refused, by session: /checkpoint edit opens them again.
	checkpointDrafts map[string]checkpointDraft
}

// segment is a piece of a turn: text the model wrote, a tool call, or a compaction line.
type segment struct {
	text *strings.Builder
	call *toolCall
	note string
}

// block is one entry of the conversation. It is drawn again at each width (glamour wraps markdown itself), so
// a finished turn keeps its segments rather than their drawing.
type block struct {
	markdown string    // markdown, drawn above text (the checkpoint /checkpoint shows)
	text     string    // styled text, wrapped to the width
	turn     []segment // a finished turn, or a stored assistant message: markdown and tool lines
	help     bool      // the /help table
}

// The results of what runs in the background.
type (
	incomingMsg struct{ v any }
	turnDoneMsg struct {
		res api.PromptResult
		err error
	}
	commandDoneMsg struct {
		text string
		err  error
	}
	sessionMsg struct {
		id, title string
		page      api.SessionResult
		err       error
		fresh     bool
		// changed: read again because another window or the CLI rewrote the session.
		changed bool
	}
	statusMsg struct{ st *api.Status }
)

// oneCell is spinner s with its frames one cell wide, like the marks of finished calls (the frames of bubbles'
// spinners end in a space of their own).
func oneCell(s spinner.Spinner) spinner.Spinner {
	frames := make([]string, len(s.Frames))
	for i, f := range s.Frames {
		frames[i] = strings.TrimRight(f, " ")
	}
	return spinner.Spinner{Frames: frames, FPS: s.FPS}
}

func newModel(ctx context.Context, client *Client, opts Options) *model {
	in := textarea.New()
	in.Placeholder = "Ask the agent… (/help for commands)"
	in.ShowLineNumbers = false
	in.Prompt = "› "
	in.SetHeight(1)
	in.CharLimit = 0
	in.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	in.Focus()
	sp := spinner.New(spinner.WithSpinner(oneCell(spinner.Dot)))
	m := &model{ctx: ctx, client: client, opts: opts, sty: newStyles(), input: in, spin: sp, view: viewport.New(80, 20), follow: true,
		overrides: Overrides{}, plugins: append([]config.Plugin(nil), opts.Config.Plugins...), memory: opts.Config.Memory.Enabled,
		checkpointDrafts: map[string]checkpointDraft{}}
	return m
}

func (m *model) Init() tea.Cmd {
	return tea.Batch(textarea.Blink, m.spin.Tick, m.next(), m.openSession(m.opts.Session, m.opts.New))
}

// next waits for the daemon's next message.
func (m *model) next() tea.Cmd {
	return func() tea.Msg { return incomingMsg{<-m.client.Incoming()} }
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.KeyMsg:
		if cmd, handled := m.key(msg); handled {
			return m, cmd
		}
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		if m.busy != "" {
			m.refresh()
		}
		return m, cmd
	case incomingMsg:
		if done, ok := msg.v.(turnDoneMsg); ok {
			// A turn ends on Incoming, after its events (Client.After).
			m.turnDone(done)
			m.adopt = true
			cmds = append(cmds, m.fetchStatus(), m.next())
			break
		}
		if cmd := m.incoming(msg.v); cmd != nil {
			cmds = append(cmds, cmd)
		}
		if _, gone := msg.v.(Disconnected); !gone {
			cmds = append(cmds, m.next())
		}
	case commandDoneMsg:
		m.busy, m.cancel, m.stopping, m.notice, m.adopt = "", nil, false, "", true
		switch {
		case msg.err != nil:
			m.say(m.sty.failed.Render(errorText(msg.err)))
		case msg.text != "":
			m.say(msg.text)
		}
		cmds = append(cmds, m.fetchStatus())
	case sessionMsg:
		m.sessionLoaded(msg)
		cmds = append(cmds, m.fetchStatus())
	case checkpointMsg:
		cmds = append(cmds, m.checkpointRead(msg))
	case editedMsg:
		cmds = append(cmds, m.checkpointEdited(msg))
	case checkpointSavedMsg:
		m.checkpointSaved(msg)
		cmds = append(cmds, m.fetchStatus())
	case statusMsg:
		if msg.st != nil && msg.st.Session == m.session {
			m.status, m.drawnEpoch, m.adopt = msg.st, max(m.drawnEpoch, msg.st.Epoch), false
		}
	}
	var cmd tea.Cmd
	typedBefore := m.input.Value()
	if k, ok := msg.(tea.KeyMsg); ok && k.Type == tea.KeyRunes && len(k.Runes) > 1 {
		// Characters that arrive together (typed over a slow link, or pasted where the terminal does not mark
		// pastes) are text: the textarea would read a word such as "delete" or "up" as that key.
		m.input.InsertString(string(k.Runes))
	} else {
		m.input, cmd = m.input.Update(msg)
		cmds = append(cmds, cmd)
	}
	if m.input.Value() != typedBefore && !m.stopping {
		m.notice = "" // a notice about what was typed (a mistyped command, Ctrl-C's) is over once the input changes
	}
	if _, typed := msg.(tea.KeyMsg); !typed { // the viewport's own keys (j, k, space…) are the input's text
		m.view, cmd = m.view.Update(msg)
		cmds = append(cmds, cmd)
	}
	m.fitInput()
	return m, tea.Batch(cmds...)
}

// key handles the keys the chat owns; the others go to the input.
func (m *model) key(k tea.KeyMsg) (tea.Cmd, bool) {
	if len(m.approvals) > 0 {
		switch strings.ToLower(k.String()) {
		case "y", "n":
			a := m.approvals[0]
			m.approvals = m.approvals[1:]
			approved := strings.EqualFold(k.String(), "y")
			verdict := "declined"
			if approved {
				verdict = "allowed"
			}
			m.answered(a, verdict)
			m.notice = ""
			return func() tea.Msg { _ = a.Answer(m.ctx, approved); return nil }, true
		case "ctrl+c", "pgup", "pgdown": // stop the turn, or scroll back to decide
		default:
			// The question waits for y or n; what else is typed is not the input's, and the user is told.
			m.notice = "Answer the question first: y allows, n declines (Ctrl-C stops the turn; PgUp scrolls back)."
			return nil, true
		}
	}
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 {
		return nil, false // text that arrived at once, even a word such as "enter": the input's
	}
	switch k.String() {
	case "ctrl+c":
		return m.stop(), true
	case "ctrl+d":
		if m.input.Value() == "" {
			m.quitting = true
			return tea.Quit, true
		}
	case "enter":
		return m.send(), true
	case "pgup", "pgdown":
		var cmd tea.Cmd
		m.view, cmd = m.view.Update(k)
		m.follow = m.view.AtBottom() // scrolled back to the end: follow it again
		return cmd, true
	case "up":
		if m.input.Line() == 0 && m.histPos > 0 {
			if m.histPos == len(m.history) {
				m.draft = m.input.Value()
			}
			m.histPos--
			m.input.SetValue(m.history[m.histPos])
			return nil, true
		}
	case "down":
		if m.input.Line() == m.input.LineCount()-1 && m.histPos < len(m.history) {
			m.histPos++
			if m.histPos == len(m.history) {
				m.input.SetValue(m.draft)
			} else {
				m.input.SetValue(m.history[m.histPos])
			}
			return nil, true
		}
	}
	return nil, false
}

// stop is Ctrl-C: it stops what runs; a second one soon after (or one with nothing running and an empty input)
// leaves.
func (m *model) stop() tea.Cmd {
	again := time.Since(m.lastStop) < leaveWindow
	m.lastStop = time.Now()
	switch {
	case again:
		m.quitting = true
		return tea.Quit
	case m.cancel != nil:
		m.cancel()
		m.stopping = true
		for _, a := range m.approvals { // the daemon withdraws them; they are answered here at once
			m.answered(a, "not run: the turn was stopped")
		}
		m.approvals = nil
		m.notice = "stopping…"
	case m.input.Value() != "":
		m.input.Reset()
		m.notice = "input cleared (Ctrl-C again leaves)"
	default:
		m.notice = "Ctrl-C again (or /exit) leaves"
	}
	return nil
}

// send sends the input: a prompt, or a slash command.
func (m *model) send() tea.Cmd {
	line := m.input.Value()
	cmd, err := ParseCommand(line)
	if err != nil {
		m.notice = err.Error()
		return nil
	}
	if m.busy != "" && cmd.Name != "help" && cmd.Name != "exit" {
		m.notice = fmt.Sprintf("wait for the %s to end, or Ctrl-C to stop it", m.busy)
		return nil
	}
	m.notice, m.lastStop = "", time.Time{} // a Ctrl-C before this send does not make the next one leave
	if cmd.Name != "" {
		m.say(m.sty.dim.Render("› " + strings.TrimSpace(line)))
	}
	if len(m.history) == 0 || m.history[len(m.history)-1] != line {
		m.history = append(m.history, line)
	}
	m.histPos, m.draft = len(m.history), ""
	m.input.Reset()
	m.follow = true // what is sent is shown, wherever the user had scrolled to
	if cmd.Name == "" {
		return m.prompt(cmd.Arg)
	}
	return m.command(cmd)
}

// prompt runs a turn.
func (m *model) prompt(text string) tea.Cmd {
	m.say(m.sty.user.Render("You") + "\n" + text)
	if m.session == "" && m.title == "" {
		m.title = agent.SessionTitle(text)
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel, m.turn = "turn", cancel, nil
	session := m.session
	return func() tea.Msg {
		if session == "" {
			// The session is made now, titled by its first prompt: a chat left before its first message
			// leaves no empty session behind to be continued next time.
			var created api.NewSessionResult
			if err := m.client.Call(ctx, "alisio/newSession", api.NewSessionParams{Title: agent.SessionTitle(text)}, &created); err != nil {
				m.client.After(turnDoneMsg{err: err})
				return nil
			}
			session = created.Session
		}
		var res api.PromptResult
		err := m.client.Call(ctx, "alisio/prompt", api.PromptParams{SessionRef: api.SessionRef{Session: session}, Text: text}, &res)
		if res.Session == "" {
			res.Session = session
		}
		// The turn's last events may still wait on Incoming: the turn ends after them, not before.
		m.client.After(turnDoneMsg{res: res, err: err})
		return nil
	}
}

// turnDone draws the finished turn for good (its text as markdown) and says how it ended.
func (m *model) turnDone(msg turnDoneMsg) {
	if msg.res.Session != "" {
		m.session = msg.res.Session
	}
	if msg.res.Reply != "" {
		m.settleReply(msg.res.Reply)
	}
	for _, s := range m.turn {
		if s.call != nil && !s.call.done {
			s.call.stopped = true // its result never came: the turn was stopped, or failed
		}
	}
	if len(m.turn) > 0 {
		m.add(block{turn: m.turn})
	}
	m.turn, m.busy, m.cancel, m.stopping = nil, "", nil, false
	switch {
	case errors.Is(msg.err, context.Canceled):
		m.say(m.sty.warn.Render("Stopped. The turn keeps what it did; send a message to go on."))
	case msg.err != nil:
		m.say(m.sty.failed.Render(errorText(msg.err)))
	case msg.res.Cut:
		m.say(m.sty.warn.Render("The reply was cut by limits.maxOutputTokens: /settings limits.maxOutputTokens 8192 allows longer ones."))
	}
	m.notice = ""
	m.refresh()
}

// incoming handles what the daemon sent.
func (m *model) incoming(v any) tea.Cmd {
	switch v := v.(type) {
	case api.Event:
		if v.Session != "" && m.session != "" && v.Session != m.session {
			return nil
		}
		m.event(v)
	case api.Status:
		if v.Session != m.session || m.session == "" {
			break
		}
		before := m.status
		m.status = &v
		if v.Epoch > m.drawnEpoch {
			m.drawnEpoch = v.Epoch
			if m.busy == "" && !m.adopt {
				return m.reopen()
			}
		}
		// A turn another window or the command line ran appends without a rewrite.
		if v.ChangedElsewhere && before != nil && v.Messages != before.Messages && m.busy == "" && !m.adopt {
			return m.reopen()
		}
	case Approval:
		m.approvals = append(m.approvals, v)
	case Withdrawn:
		for i, a := range m.approvals {
			if v.Is(a) {
				m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
				if m.stopping {
					m.answered(a, "not asked any more (stopped)")
				} else {
					m.answered(a, "declined: the question expired")
				}
				break
			}
		}
	case Notice:
		text := v.Text
		if v.Error {
			text = m.sty.failed.Render(text)
		}
		m.say(text)
	case Disconnected:
		m.say(m.sty.failed.Render("The connection to the shared daemon ended. Leave with Ctrl-C and run `alisio-lsp chat` again: it continues this session."))
		if m.cancel != nil {
			m.cancel()
		}
	}
	m.refresh()
	return nil
}

// event adds a turn's event to the running turn.
func (m *model) event(ev api.Event) {
	if m.busy != "turn" {
		if ev.Event != nil && ev.Cause == api.CauseStopped {
			return // the command that was stopped says so
		}
		if ev.Summary != "" && m.busy == "" {
			m.say(m.sty.dim.Render("⟳ " + ev.Summary))
		}
		return
	}
	if m.session == "" && ev.Session != "" {
		m.session = ev.Session
	}
	switch ev.Type {
	case api.EventDelta:
		m.appendText(ev.Text)
	case api.EventToolCall:
		m.turn = append(m.turn, segment{call: &toolCall{id: ev.ID, name: ev.Name, args: ev.Arguments}})
	case api.EventToolResult:
		for i := len(m.turn) - 1; i >= 0; i-- {
			if c := m.turn[i].call; c != nil && c.id == ev.ID && !c.done {
				c.done, c.declined, c.exitCode = true, ev.Declined, ev.ExitCode
				c.failed = ev.IsError != nil && *ev.IsError && !ev.Declined
				if ev.Chars != nil {
					c.chars = *ev.Chars
				}
				break
			}
		}
	case api.EventReply:
	default:
		if ev.Summary != "" {
			m.addNote("⟳ " + ev.Summary)
		}
	}
}

// settleReply puts the whole reply in place of its streamed text, whose last deltas may still be on their
// way: the text after the turn's last tool call, in its first piece, even when a note (a compaction starting
// in the background) came after it or split it.
func (m *model) settleReply(reply string) {
	from := len(m.turn)
	for from > 0 && m.turn[from-1].call == nil {
		from--
	}
	placed := false
	for _, s := range m.turn[from:] {
		if s.text == nil {
			continue
		}
		s.text.Reset()
		if !placed {
			s.text.WriteString(reply)
			placed = true
		}
	}
	if !placed {
		m.appendText(reply)
	}
}

func (m *model) appendText(text string) {
	if n := len(m.turn); n == 0 || m.turn[n-1].text == nil {
		m.turn = append(m.turn, segment{text: &strings.Builder{}})
	}
	m.turn[len(m.turn)-1].text.WriteString(text)
}

// addNote adds a line to the running turn, or below the conversation when none runs.
func (m *model) addNote(text string) {
	if m.busy == "turn" {
		m.turn = append(m.turn, segment{note: text})
		return
	}
	m.say(m.sty.dim.Render(text))
}

// answered marks the call of approval a with the user's verdict; a call not drawn yet gets a line of its own.
func (m *model) answered(a Approval, verdict string) {
	for _, s := range m.turn {
		if s.call != nil && s.call.id == a.Call.ID {
			s.call.verdict = verdict
			return
		}
	}
	m.addNote(a.Call.Name + ": " + verdict)
}

// drawSegments draws a turn's segments; final renders text as markdown (while it streams it is drawn plain),
// and a call that has no outcome gets no spinner.
func (m *model) drawSegments(segs []segment, final bool) string {
	spin := m.spin.View()
	if final {
		spin = "?"
	}
	var b strings.Builder
	add := func(part string, text bool) {
		if b.Len() > 0 {
			b.WriteString("\n")
			if text {
				b.WriteString("\n") // text after a call has a blank line above it, as a turn read back from the store
			}
		}
		b.WriteString(part)
	}
	for _, s := range segs {
		switch {
		case s.call != nil:
			add(s.call.line(spin, m.sty), false)
		case s.note != "":
			add(m.wrap(m.sty.dim.Render(s.note)), false)
		case s.text != nil && strings.TrimSpace(s.text.String()) != "":
			if final {
				add(m.markdown(s.text.String()), true)
			} else {
				// Where glamour will draw it (its margin of 2 each side, inside its wrap at width-4), so that
				// the finished reply does not move.
				add(lipgloss.NewStyle().PaddingLeft(2).Width(max(20, m.width-6)).Render(strings.TrimSpace(s.text.String())), true)
			}
		}
	}
	return b.String()
}

// markdown draws text, a reply's or the checkpoint's markdown, at the width.
func (m *model) markdown(text string) string {
	if m.md != nil {
		// glamour wraps a line broken at a hyphen one cell too long, then wraps its block again, which leaves a
		// word alone on a line of its own (glamour#452): the hyphens of words do not break there, and are
		// given back once drawn.
		if out, err := m.md.Render(unbreakableHyphens(text)); err == nil {
			return strings.Trim(strings.ReplaceAll(out, nonBreakingHyphen, "-"), "\n")
		}
	}
	return strings.TrimSpace(text)
}

// nonBreakingHyphen is U+2011, a hyphen no line is broken at.
const nonBreakingHyphen = "\u2011"

// unbreakableHyphens is text with each hyphen between two letters or digits (in words, not markdown's
// bullets and rules) made a non-breaking one.
func unbreakableHyphens(text string) string {
	if !strings.Contains(text, "-") {
		return text
	}
	runes := []rune(text)
	var b strings.Builder
	for i, r := range runes {
		if r == '-' && i > 0 && i < len(runes)-1 && wordRune(runes[i-1]) && wordRune(runes[i+1]) {
			b.WriteString(nonBreakingHyphen)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// say adds a block of text below the conversation.
func (m *model) say(text string) {
	m.add(block{text: text})
	m.refresh()
}

// add adds a block, drawn at the width once (redrawing every block at each spinner tick would make a long
// session slow).
func (m *model) add(b block) {
	if len(m.blocks) >= maxBlocks {
		// The oldest scroll away (`alisio-lsp sessions show` prints a whole session): a redraw stays bounded.
		m.blocks = append([]block(nil), m.blocks[maxBlocks/4:]...)
		m.redrawBlocks()
	}
	m.blocks = append(m.blocks, b)
	if m.drawn != "" {
		m.drawn += "\n\n"
	}
	m.drawn += m.draw(b)
}

// draw draws block b at the current width.
func (m *model) draw(b block) string {
	switch {
	case b.help:
		return helpView(m.width)
	case b.turn != nil:
		return m.drawSegments(b.turn, true)
	case b.markdown != "":
		return m.markdown(b.markdown) + "\n\n" + m.wrap(b.text)
	}
	return m.wrap(b.text)
}

// wrap wraps text to the width; the lines of an indented row (a list's) wrap under its indent, not at
// column 0.
func (m *model) wrap(text string) string {
	if m.width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if lipgloss.Width(l) <= m.width {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if strings.HasPrefix(l, "* ") {
			indent = 2
		}
		if indent == 0 || indent+2 >= m.width-10 {
			lines[i] = lipgloss.NewStyle().Width(m.width).Render(l)
			continue
		}
		wrapped := strings.Split(lipgloss.NewStyle().Width(m.width-indent-2).Render(l[indent:]), "\n")
		for j := range wrapped {
			pad := strings.Repeat(" ", indent+2)
			if j == 0 {
				pad = l[:indent]
			}
			wrapped[j] = strings.TrimRight(pad+wrapped[j], " ")
		}
		lines[i] = strings.Join(wrapped, "\n")
	}
	return strings.Join(lines, "\n")
}

// redrawBlocks draws every block again, for a new width or after blocks were dropped.
func (m *model) redrawBlocks() {
	blocks := m.blocks
	m.blocks, m.drawn = nil, ""
	for _, b := range blocks {
		m.add(b)
	}
}

// refresh redraws the conversation, following its end unless the user scrolled up.
func (m *model) refresh() {
	content := m.drawn
	if m.busy == "turn" {
		running := m.drawSegments(m.turn, false)
		if waiting(m.turn) {
			running = strings.TrimLeft(running+"\n"+m.spin.View()+" thinking…", "\n")
		}
		content += "\n\n" + running
	} else if m.busy != "" {
		content += "\n\n" + m.spin.View() + " " + m.busy + "…"
	}
	m.view.SetContent(content)
	if m.follow {
		m.view.GotoBottom()
	}
}

// waiting says whether a running turn waits for the model: nothing came yet, or the last thing that came
// was a finished call or a note (a running call has its own spinner, text its own progress).
func waiting(turn []segment) bool {
	if len(turn) == 0 {
		return true
	}
	last := turn[len(turn)-1]
	return last.note != "" || last.call != nil && last.call.done
}

// fitInput grows the input with what it holds, from one line up to a quarter of the screen.
func (m *model) fitInput() {
	lines := 0
	width := max(10, m.input.Width()-1)
	for _, l := range strings.Split(m.input.Value(), "\n") {
		lines += 1 + lipgloss.Width(l)/width
	}
	h := min(max(1, lines), max(3, m.height/4))
	if h == m.input.Height() {
		return
	}
	m.input.SetHeight(h)
	if lines <= h {
		// The textarea keeps the offset it scrolled to while it was shorter, hiding the first line: set the
		// text again (from the top) and put the cursor back.
		row, info := m.input.Line(), m.input.LineInfo()
		m.input.SetValue(m.input.Value())
		for i := 0; m.input.Line() > row && i < 10_000; i++ { // a wrapped line takes a CursorUp a row
			m.input.CursorUp()
		}
		m.input.SetCursor(info.StartColumn + info.ColumnOffset)
	}
	m.layout()
	m.refresh()
}

func (m *model) resize(w, h int) {
	m.width, m.height = w, h
	m.input.SetWidth(w)
	m.fitInput()
	m.view.Width = w
	m.layout()
	if md, err := glamour.NewTermRenderer(glamour.WithStyles(markdownStyle(os.Getenv("NO_COLOR") != "" || lipgloss.ColorProfile() == 0)),
		glamour.WithWordWrap(max(20, w-4))); err == nil {
		m.md = md
	}
	m.redrawBlocks()
	m.refresh()
}

// layout gives the conversation what the meter, the question, the notice and the input leave.
func (m *model) layout() {
	used := m.input.Height() + 1 + lipgloss.Height(m.noticeView()) // the meter, the notice
	if len(m.approvals) > 0 {
		used += lipgloss.Height(approvalView(m.approvals[0].ApproveParams, m.width, m.sty))
	}
	m.view.Height = max(3, m.height-used)
}

func (m *model) View() string {
	if m.quitting {
		return ""
	}
	if m.width == 0 {
		return "starting…"
	}
	m.layout()
	parts := []string{m.view.View(), meterLine(m.status, m.session, m.title, m.width, m.sty)}
	if len(m.approvals) > 0 {
		parts = append(parts, approvalView(m.approvals[0].ApproveParams, m.width, m.sty))
	}
	parts = append(parts, m.noticeView(), m.input.View())
	return strings.Join(parts, "\n")
}

// maxNoticeLines bounds the notice above the input: an error that says what to do is read whole, in a narrow
// terminal too, without pushing the conversation off the screen.
const maxNoticeLines = 3

// noticeView is the notice above the input (one empty line when there is none), wrapped at the width.
func (m *model) noticeView() string {
	notice := m.notice
	switch {
	case notice == "" && !m.follow && !m.view.AtBottom():
		notice = "↓ more below: PgDn (sending a message goes to the end)"
	case notice == "" && m.status != nil && len(m.status.Notices) > 0:
		notice = m.status.Notices[0].Text
	}
	width := max(10, m.width)
	lines := strings.Split(lipgloss.NewStyle().Width(width).Render(notice), "\n")
	if len(lines) > maxNoticeLines {
		lines = lines[:maxNoticeLines]
		lines[maxNoticeLines-1] = clip(strings.TrimRight(lines[maxNoticeLines-1], " ")+" …", width)
	}
	for i, line := range lines {
		lines[i] = m.sty.warn.Render(strings.TrimRight(line, " "))
	}
	return strings.Join(lines, "\n")
}

// fetchStatus asks for the meter of the current session (of the first request when there is none yet).
func (m *model) fetchStatus() tea.Cmd {
	session := m.session
	return func() tea.Msg {
		var st api.Status
		if err := m.client.Call(m.ctx, "alisio/status", api.StatusParams{SessionRef: api.SessionRef{Session: session}, NewSession: session == ""}, &st); err != nil {
			return statusMsg{}
		}
		return statusMsg{&st}
	}
}

// openSession continues session id (the workspace's most recent when "", none when fresh) and draws its last
// messages.
func (m *model) openSession(id string, fresh bool) tea.Cmd {
	return func() tea.Msg {
		if fresh {
			return sessionMsg{fresh: true} // made with the first prompt
		}
		found, err := FindSession(m.ctx, m.client, id)
		switch {
		case errors.Is(err, errNoSessions):
			return sessionMsg{}
		case err != nil:
			return sessionMsg{err: fmt.Errorf("%w (/sessions lists them; /new starts one)", err)}
		}
		limit := 40
		var page api.SessionResult
		err = m.client.Call(m.ctx, "alisio/session", api.SessionParams{SessionRef: api.SessionRef{Session: found.ID}, Limit: &limit}, &page)
		return sessionMsg{id: found.ID, title: found.Title, page: page, err: err}
	}
}

// readingAgain is what runs (busy) while the session is read again: a command's answer drawn meanwhile would
// be drawn over by the conversation read.
const readingAgain = "reading of the session"

// reopen reads the session again after another window or the CLI rewrote it, and draws it.
func (m *model) reopen() tea.Cmd {
	m.busy = readingAgain
	open := m.openSession(m.session, false)
	return func() tea.Msg {
		msg := open().(sessionMsg)
		msg.changed = true
		return msg
	}
}

// errNoSessions: the workspace has no session to continue.
var errNoSessions = errors.New("this workspace has no sessions yet")

// FindSession is the session id names (its ID, or at least its first 4 characters), of the workspace or
// another one; "" names the workspace's most recent session (errNoSessions when it has none).
func FindSession(ctx context.Context, client *Client, id string) (api.SessionSummary, error) {
	var list api.SessionsResult
	if err := client.Call(ctx, "alisio/sessions", api.SessionsParams{All: id != ""}, &list); err != nil {
		return api.SessionSummary{}, err
	}
	if id == "" {
		if len(list.Sessions) == 0 {
			return api.SessionSummary{}, errNoSessions
		}
		return list.Sessions[0], nil
	}
	var matches []api.SessionSummary
	for _, s := range list.Sessions {
		if s.ID == id {
			return s, nil
		}
		if len(id) >= 4 && strings.HasPrefix(s.ID, id) {
			matches = append(matches, s)
		}
	}
	switch len(matches) {
	case 0:
		return api.SessionSummary{}, fmt.Errorf("there is no session %q", id)
	case 1:
		return matches[0], nil
	}
	return api.SessionSummary{}, fmt.Errorf("%d sessions begin with %q: give more of the ID", len(matches), id)
}

// sessionLoaded draws a session opened or switched to.
func (m *model) sessionLoaded(msg sessionMsg) {
	if msg.changed && m.busy != readingAgain {
		return // a turn started meanwhile: it draws what it does
	}
	m.busy = ""
	if msg.err != nil {
		m.say(m.sty.failed.Render(errorText(msg.err)))
		return
	}
	m.blocks, m.drawn, m.session, m.title, m.status, m.follow = nil, "", msg.id, msg.title, nil, true
	m.drawnEpoch, m.adopt = 0, true // the status read after it says which epoch this draws
	if msg.id == "" {
		m.say(m.sty.dim.Render("A new session starts with your first message. /help lists the commands."))
		return
	}
	if msg.page.Offset > 0 {
		m.say(m.sty.dim.Render(fmt.Sprintf("… %d earlier messages (alisio-lsp sessions show %s prints them all)", msg.page.Offset, shortID(msg.id))))
	}
	for _, pm := range msg.page.Messages {
		if b, ok := m.storedBlock(pm, msg.page.Messages); ok {
			m.add(b)
		}
	}
	if msg.changed {
		m.say(m.sty.dim.Render(fmt.Sprintf("The session was changed outside this chat (a turn, a compaction, an undo or a checkpoint edit in another window or on the command line): read again, %d messages.", msg.page.Total)))
		return
	}
	m.say(m.sty.dim.Render(fmt.Sprintf("Continuing session %s (%d messages). /new starts another; /help lists the commands.", shortID(msg.id), msg.page.Total)))
}

// storedBlock is one stored message of page as the chat drew it live (false: it is not drawn, as a tool
// result, which its call's line stands for).
func (m *model) storedBlock(pm api.PageMessage, page []api.PageMessage) (block, bool) {
	switch {
	case pm.Summary:
		return block{text: m.sty.dim.Render(fmt.Sprintf("⟳ checkpoint: the conversation before this point was compacted (%s chars). /undo restores it.", api.Human(pm.Chars)))}, true
	case pm.Role == "user":
		return block{text: m.sty.user.Render("You") + "\n" + pm.Text}, true
	case pm.Role == "assistant":
		var segs []segment
		if strings.TrimSpace(pm.Text) != "" {
			text := &strings.Builder{}
			text.WriteString(pm.Text)
			segs = append(segs, segment{text: text})
		}
		for i, c := range pm.ToolCalls {
			tc := toolCall{id: c.ID, name: c.Name, args: c.Arguments}
			if i < len(pm.Outcomes) {
				o := pm.Outcomes[i]
				tc.failed, tc.declined, tc.exitCode = o.State == api.CallFailed, o.State == api.CallDeclined, o.ExitCode
				tc.done = o.State == api.CallDone || tc.failed || tc.declined
				if o.Result >= 0 && o.Result < len(page) {
					tc.chars = len([]rune(page[o.Result].Text))
					if tc.failed || tc.declined { // its result says why: a command's error, a no, no answer in time…
						tc.reason, _, _ = strings.Cut(strings.TrimSpace(page[o.Result].Text), "\n")
					}
				}
			}
			segs = append(segs, segment{call: &tc})
		}
		return block{turn: segs}, len(segs) > 0
	}
	return block{}, false
}

// command runs a slash command.
func (m *model) command(c Command) tea.Cmd {
	switch c.Name {
	case "help":
		m.add(block{help: true})
		m.refresh()
		return nil
	case "exit":
		m.quitting = true
		return tea.Quit
	case "new":
		m.busy = "new session"
		return m.openSession("", true)
	case "sessions":
		return m.sessions(c.Arg)
	case "plugins":
		return m.pluginsCommand(c.Arg)
	case "settings":
		return m.settingsCommand(c.Arg)
	case "checkpoint":
		return m.checkpointCommand(c.Arg)
	}
	if m.session == "" && c.Name != "mcps" && c.Name != "context" && c.Name != "memories" {
		m.say(m.sty.failed.Render(noMessagesYet("/" + c.Name)))
		return nil
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.busy, m.cancel = c.Name, cancel
	if c.Name == "compact" {
		m.busy = "compaction"
	}
	ref := api.SessionRef{Session: m.session}
	width := m.width // read here: the command runs outside Update
	m.refresh()
	return func() tea.Msg {
		switch c.Name {
		case "compact":
			var res api.CompactResult
			if err := m.client.Call(ctx, "alisio/compact", api.CompactParams{SessionRef: ref, Focus: c.Arg}, &res); err != nil {
				var re *RequestError
				switch {
				case errors.Is(err, context.Canceled):
					return commandDoneMsg{text: "The compaction was stopped: the session is as it was."}
				case errors.As(err, &re) && re.Kind() == api.KindNothingToCompact:
					// The daemon's words say why: too little history before the kept turns, or no gain.
					return commandDoneMsg{text: "Compaction skipped: " + strings.TrimPrefix(re.Message, "compaction ")}
				}
				return commandDoneMsg{err: err}
			}
			return commandDoneMsg{text: "⟳ " + res.Event.Summary}
		case "undo":
			var res api.UndoCompactionResult
			err := m.client.Call(ctx, "alisio/undoCompaction", ref, &res)
			return commandDoneMsg{text: res.Message, err: err}
		case "context":
			var parts api.ContextResult
			var st api.Status
			if ref.Session != "" {
				if err := m.client.Call(ctx, "alisio/context", api.ContextParams{SessionRef: ref}, &parts); err != nil {
					return commandDoneMsg{err: err}
				}
			}
			if err := m.client.Call(ctx, "alisio/status", api.StatusParams{SessionRef: ref, NewSession: ref.Session == ""}, &st); err != nil {
				return commandDoneMsg{err: err}
			}
			return commandDoneMsg{text: contextView(parts.Parts, &st, width)}
		case "memories":
			return m.memoriesCommand(ctx, c.Arg, width)
		case "mcps":
			var d api.ToolsResult
			err := m.client.Call(ctx, "alisio/tools", api.ToolsParams{}, &d)
			return commandDoneMsg{text: mcpsView(d), err: err}
		case "recover":
			ack := strings.EqualFold(c.Arg, "acknowledge")
			if c.Arg != "" && !ack {
				return commandDoneMsg{err: fmt.Errorf("/recover takes nothing, or acknowledge")}
			}
			var res api.RecoverResult
			if err := m.client.Call(ctx, "alisio/recover", api.RecoverParams{SessionRef: ref, Acknowledge: ack}, &res); err != nil {
				return commandDoneMsg{err: err}
			}
			if res.Recovered == 0 {
				return commandDoneMsg{text: "This session has no uncertain tool calls."}
			}
			return commandDoneMsg{text: fmt.Sprintf("Recorded an unknown outcome for %s; the session can go on.", api.Count(res.Recovered, "tool call", "tool calls"))}
		}
		return commandDoneMsg{err: fmt.Errorf("/%s is not a command here", c.Name)}
	}
}

// noMessagesYet says why command does nothing in a session nothing was sent in yet.
func noMessagesYet(command string) string {
	return command + ": this session has no messages yet, so there is nothing to work on. Send a message first (or /sessions to open another session)."
}

// sessions lists the workspace's sessions, or switches to one (by number in the list, or ID).
func (m *model) sessions(arg string) tea.Cmd {
	current := m.session
	return func() tea.Msg {
		var list api.SessionsResult
		if err := m.client.Call(m.ctx, "alisio/sessions", api.SessionsParams{}, &list); err != nil {
			return commandDoneMsg{err: err}
		}
		if arg == "" {
			return commandDoneMsg{text: sessionsView(list.Sessions, current, time.Now())}
		}
		id := arg
		if n, err := strconv.Atoi(arg); err == nil {
			if n < 1 || n > len(list.Sessions) {
				return commandDoneMsg{err: fmt.Errorf("there is no session %d: /sessions lists %d", n, len(list.Sessions))}
			}
			id = list.Sessions[n-1].ID
		}
		return m.openSession(id, false)()
	}
}

// pluginsCommand lists the plugins, or turns one on or off for this chat.
func (m *model) pluginsCommand(arg string) tea.Cmd {
	verb, name, _ := strings.Cut(strings.TrimSpace(arg), " ")
	name = strings.TrimSpace(name)
	if verb == "" {
		m.say(pluginsView(m.plugins, m.memory))
		return nil
	}
	if verb != "enable" && verb != "disable" || name == "" {
		m.say(m.sty.failed.Render("use /plugins enable NAME or /plugins disable NAME"))
		return nil
	}
	on := verb == "enable"
	found := name == "memory"
	if found {
		m.memory = on
		m.overrides["memory.enabled"] = on
	}
	for i := range m.plugins {
		if m.plugins[i].Name == name {
			m.plugins[i].Disabled, found = !on, true
			m.overrides["plugins"] = m.plugins
		}
	}
	if !found {
		m.say(m.sty.failed.Render(fmt.Sprintf("no plugin is named %q: /plugins lists them", name)))
		return nil
	}
	return m.applySettings(fmt.Sprintf("%s is %sd for this chat.", name, verb))
}

// settingsCommand shows the settings this chat changed, or changes one.
func (m *model) settingsCommand(arg string) tea.Cmd {
	if strings.TrimSpace(arg) == "" {
		cfg, _ := config.Overlay(m.opts.Config, m.overrides.JSON(), "/settings")
		var b strings.Builder
		approval := cfg.Tools.Approval
		if approval == "" {
			approval = "ask (the default: edits and commands wait for your y/n)"
		}
		fmt.Fprintf(&b, "In force: limits.maxContextChars %d · compaction.threshold %g · compaction.keepTurns %d · compaction.auto %v · tools.approval %s\n",
			cfg.Limits.MaxContextChars, cfg.Compaction.Threshold, cfg.Compaction.KeepTurns, cfg.Compaction.Auto, approval)
		if len(m.overrides) == 0 {
			b.WriteString("This chat changed none. /settings KEY VALUE changes one (the config file's names), /settings KEY drops the change.")
		} else {
			b.WriteString("Changed by this chat:")
			for _, k := range m.overrides.Keys() {
				fmt.Fprintf(&b, "\n  %s = %v", k, m.overrides[k])
			}
		}
		m.say(b.String())
		return nil
	}
	key, value, _ := strings.Cut(strings.TrimSpace(arg), " ")
	if _, changed := m.overrides[key]; !changed && strings.TrimSpace(value) == "" {
		m.say(fmt.Sprintf("%s was not changed by this chat, so there is nothing to drop (/settings lists what it changed; /settings %s VALUE changes it).", key, key))
		return nil
	}
	before := Overrides{}
	for k, v := range m.overrides {
		before[k] = v
	}
	if err := m.overrides.Set(key, value); err != nil {
		m.say(m.sty.failed.Render(err.Error()))
		return nil
	}
	if _, err := config.Overlay(m.opts.Config, m.overrides.JSON(), "/settings"); err != nil {
		m.overrides = before
		var unknown *config.UnknownSettingError
		if errors.As(err, &unknown) {
			err = fmt.Errorf("there is no setting %s (the config file's names, as limits.maxContextChars or compaction.threshold; the README's configuration reference lists them)", key)
		}
		m.say(m.sty.failed.Render(err.Error() + ". Nothing changed."))
		return nil
	}
	done := fmt.Sprintf("%s is %s for this chat.", key, strings.TrimSpace(value))
	if strings.TrimSpace(value) == "" {
		done = fmt.Sprintf("%s is back to the config file's value.", key)
	}
	return m.applySettings(done)
}

// applySettings sends the chat's settings to the daemon, as an editor sends its own.
func (m *model) applySettings(done string) tea.Cmd {
	return func() tea.Msg {
		return commandDoneMsg{text: done, err: m.sendSettings(m.ctx)}
	}
}

// sendSettings gives the daemon the chat's settings: its config file's, then the /settings changes over them.
func (m *model) sendSettings(ctx context.Context) error {
	settings := mergeSettings(m.opts.Settings, m.overrides.JSON())
	return m.client.Notify(ctx, "workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"alisio": settings}})
}

// errorText is what the user reads of a failed request.
func errorText(err error) string {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Message
	}
	return err.Error()
}

// markdownStyle is how replies are drawn: glamour's dark style, with inline code marked by its colours only (the
// style pads it with a space on each side, which read as doubled spaces, and as a space before the punctuation
// after it); without colours (NO_COLOR, not a terminal), its plain style, which marks code with backticks.
func markdownStyle(plain bool) ansi.StyleConfig {
	if plain {
		return glamourstyles.NoTTYStyleConfig
	}
	style := glamourstyles.DarkStyleConfig
	style.Code.Prefix, style.Code.Suffix = "", ""
	return style
}
