package main_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// leaveWindowForTests is more than the chat's window in which a second Ctrl-C leaves.
const leaveWindowForTests = 3500 * time.Millisecond

// terminal is a tmux server of the test's own, with one window.
type terminal struct {
	t      *testing.T
	socket string
}

func (term terminal) tmux(args ...string) string {
	term.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", term.socket}, args...)...).CombinedOutput()
	if err != nil {
		term.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// keys types keys into the window (tmux key names: Enter, C-c, …).
func (term terminal) keys(keys ...string) {
	term.tmux(append([]string{"send-keys", "-t", "0"}, keys...)...)
}

// wait returns the screen once ok holds for it, failing the test after 30 s.
func (term terminal) wait(what string, ok func(screen string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := term.tmux("capture-pane", "-p", "-J", "-t", "0") // -J: lines the terminal wrapped come whole
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sendWhenFree sends line, and sends it again while the chat asks to wait for its own work to end (it reads
// the session again after a change made elsewhere), until want is on screen once more than before: what a
// user does.
func (term terminal) sendWhenFree(line, want string) string {
	term.t.Helper()
	before := strings.Count(term.tmux("capture-pane", "-p", "-J", "-t", "0"), want)
	term.keys(line, "Enter")
	return term.wait(fmt.Sprintf("%q", want), func(s string) bool {
		if strings.Count(s, want) > before {
			return true
		}
		if strings.Contains(s, "wait for the ") && strings.Contains(s, "› "+line) {
			term.keys("Enter") // the line is still in the input
		}
		return false
	})
}

func (term terminal) waitFor(text string) string {
	term.t.Helper()
	return term.wait(fmt.Sprintf("%q", text), func(s string) bool { return strings.Contains(s, text) })
}

// TestChat_InATerminal: `alisio-lsp chat` in a real terminal (tmux) against the scripted provider, through the
// shared daemon it starts: a prompt streams its reply (markdown drawn for the terminal), a file write waits for
// the user's y, tool calls fold to one line, the meter is drawn; Ctrl-C stops a slow turn (the provider sees
// the request cancelled) and a second one leaves with code 0; slash commands answer, a mistyped one gets a hint,
// a refused setting says why; chat run again continues the session with its messages; a compaction on the
// command line is drawn in the open chat; the daemon leaves after its idle time.
func TestChat_InATerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{Text: "Writing the notes.", ToolCalls: []providertest.ToolCall{{ID: "call_w", Name: "write_file", Arguments: `{"path":"notes.md","content":"# Notes\n"}`}}},
		{Text: "**Done**: wrote `notes.md`.\n\n" + strings.Repeat("The notes hold what we found. ", 40), DelayMs: 1500},
		{Text: "Running it.", ToolCalls: []providertest.ToolCall{{ID: "call_s", Name: "run_command", Arguments: `{"command":"sleep 30"}`}}},
		{Text: "too slow", DelayMs: 60_000},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data, ws := t.TempDir(), t.TempDir()
	cfg := configFor(t, hs.URL)
	seedMemories(t, data, ws, "Tests run with make test.")
	term := terminal{t: t, socket: fmt.Sprintf("alisio-chat-test-%d", os.Getpid())}
	// The user's editor, for /checkpoint edit, one step a run: 1 and 4 give the goal a number (the daemon
	// refuses it), 2 quits without saving, 3 saves the file empty, 5 mends the kept draft, 6 and 7 save it as
	// it is.
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte(`#!/bin/sh
n=$(cat "$0.count" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$0.count"
case $n in
1|4) sed -i 's/"goal": ".*",/"goal": 5,/' "$1";;
2) ;;
3) : > "$1";;
*) sed -i 's/"goal": 5,/"goal": "Edited in the terminal",/' "$1";;
esac
`), 0o755); err != nil {
		t.Fatal(err)
	}
	chat := fmt.Sprintf("env ALISIO_DAEMON_IDLE=1s VISUAL= EDITOR=%s %s --data-dir %s --config %s chat --workspace %s; echo CHAT-EXIT=$?; sleep 600", editor, binary, data, cfg, ws)
	term.tmux("new-session", "-d", "-x", "120", "-y", "40", chat)
	defer exec.Command("tmux", "-L", term.socket, "kill-server").Run()

	term.waitFor("A new session starts with your first message")
	term.waitFor("compacts at 85%") // the meter of the first request, before any message
	term.keys("write the notes", "Enter")
	term.waitFor("The agent wants to create notes.md")
	term.keys("y")
	// The write is done and the model has not answered yet: the chat says it waits, below the call's line.
	term.wait("thinking… after the call", func(s string) bool {
		return strings.Contains(s, "✓ write_file notes.md · allowed") && strings.Contains(s, "thinking…")
	})
	done := term.waitFor("Done: wrote")
	if strings.Contains(done, "**Done**") {
		t.Errorf("the reply's markdown was not drawn for the terminal:\n%s", done)
	}
	if !strings.Contains(done, "✓ write_file notes.md") {
		t.Errorf("the tool call is not one line with its status:\n%s", done)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.md")); err != nil || string(b) != "# Notes\n" {
		t.Errorf("the approved write did not happen: %q %v", b, err)
	}
	term.wait("the meter after the turn", func(s string) bool { return strings.Contains(s, "session ") && strings.Contains(s, "tokens (") })

	// A narrower, shorter window: the meter keeps its figures, the conversation still follows its end.
	term.tmux("resize-window", "-t", "0", "-x", "70", "-y", "24")
	term.keys("/help", "Enter")
	help := term.waitFor("/exit")
	if !strings.Contains(help, "tokens (") {
		t.Errorf("the meter lost its figures in 70 columns:\n%s", help)
	}
	for _, l := range strings.Split(help, "\n") {
		if strings.HasPrefix(l, "undo") || strings.HasPrefix(l, "the ") {
			t.Errorf("a /help line wrapped to column 0: %q\n%s", l, help)
		}
	}
	// Scrolled up, the chat says more is below; what is sent then is shown, at the end.
	term.keys("PageUp")
	term.waitFor("more below: PgDn")
	term.keys("/context", "Enter")
	term.waitFor("Next model call:")
	term.tmux("resize-window", "-t", "0", "-x", "120", "-y", "40")

	// A command the user allowed, stopped with Ctrl-C while it runs: its line says so, no spinner left.
	term.keys("run the slow one", "Enter")
	term.waitFor("The agent wants to run")
	term.keys("y")
	term.waitFor("run_command sleep 30 · allowed")
	term.keys("C-c")
	stopped := term.waitFor("Stopped. The turn keeps what it did")
	if !strings.Contains(stopped, "run_command sleep 30 · allowed ·") || strings.Count(stopped, "Stopped.") != 1 {
		t.Errorf("the stopped command's line:\n%s", stopped)
	}
	time.Sleep(leaveWindowForTests) // the next Ctrl-C must stop, not leave

	term.keys("/sessoins", "Enter")
	term.waitFor("did you mean /sessions?")
	term.keys("C-u", "/settings limits.bogus 3", "Enter")
	term.waitFor("Nothing changed.")
	term.keys("/context", "Enter")
	term.waitFor("Context of session")

	// Ctrl-C stops a slow turn, the daemon stops the request, and the chat says what became of it.
	// A message of several lines: every line stays in sight while it is typed.
	term.keys("take your", "C-j", "time,", "C-j", "please")
	typing := term.waitFor("› please")
	if !strings.Contains(typing, "› take your") || !strings.Contains(typing, "› time,") {
		t.Errorf("a line of the input went out of sight:\n%s", typing)
	}
	before := len(srv.Requests())
	term.keys("Enter")
	for deadline := time.Now().Add(30 * time.Second); len(srv.Requests()) <= before; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slow prompt never reached the provider")
		}
	}
	term.keys("C-c")
	term.waitFor("Stopped. The turn keeps what it did")
	for deadline := time.Now().Add(15 * time.Second); srv.Cancelled() == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon kept running the turn after Ctrl-C")
		}
	}
	// A second Ctrl-C leaves: at once when it comes soon after the first, else after the chat says so.
	term.keys("C-c")
	if s := term.wait("the chat to leave or ask again", func(s string) bool {
		return strings.Contains(s, "CHAT-EXIT=") || strings.Contains(s, "Ctrl-C again")
	}); !strings.Contains(s, "CHAT-EXIT=") {
		term.keys("C-c")
	}
	term.waitFor("CHAT-EXIT=0")

	// Run again: the session goes on, its messages drawn.
	continues := func() {
		t.Helper()
		term.tmux("respawn-pane", "-k", "-t", "0", chat)
		term.waitFor("Continuing session")
		term.waitFor("write the notes")
		term.keys("/exit", "Enter")
		term.waitFor("CHAT-EXIT=0")
	}
	continues()
	// The line to continue names the flags the chat was given.
	kept := term.waitFor(fmt.Sprintf("The session is kept: `alisio-lsp --data-dir %s --config %s chat --workspace %s --session ", data, cfg, ws))
	sessionID := regexp.MustCompile("--session ([0-9a-f-]+)`").FindStringSubmatch(kept)[1]

	// --session from another directory, without --workspace: the chat works in the session's workspace.
	elsewhere := strings.Replace(chat, " chat --workspace "+ws, " chat --session "+sessionID, 1)
	term.tmux("respawn-pane", "-k", "-t", "0", "cd "+t.TempDir()+" && "+elsewhere)
	term.waitFor("Continuing session")
	term.keys("/sessions", "Enter")
	term.waitFor("*  1  " + sessionID[:8]) // the current one, listed among its workspace's sessions
	// A compaction on the command line, through the same daemon: the open chat reads the session again.
	compact := exec.Command(binary, "--data-dir", data, "--config", cfg, "compact", sessionID)
	compact.Dir = ws
	if out, err := compact.CombinedOutput(); err != nil || !strings.Contains(string(out), "compacted") {
		t.Fatalf("compact on the command line: %v\n%s", err, out)
	}
	reread := term.waitFor("The session was changed outside this chat")
	if !strings.Contains(reread, "⟳ checkpoint") || strings.Contains(reread, "Done: wrote") {
		t.Errorf("the conversation was not drawn again after the compaction:\n%s", reread)
	}
	// The checkpoint, shown; edited in the user's editor: a refused edit says why and is kept; quitting the
	// editor sends nothing and keeps it; saving it empty drops it.
	term.keys("/checkpoint", "Enter")
	term.waitFor("The checkpoint in force: it replaced")
	term.keys("/checkpoint edit", "Enter")
	term.waitFor("Your edit is kept: /checkpoint edit opens it again")
	term.keys("/checkpoint edit", "Enter")
	term.waitFor("The editor quit without saving: nothing was sent. Your earlier edit is still kept")
	term.keys("/checkpoint edit", "Enter")
	term.waitFor("your kept edit is dropped")
	// A kept edit stays an edit of the checkpoint it was written against: when the shell writes a newer one
	// meanwhile, the mended draft is refused rather than replace what it never saw; saved again, once the user
	// was told, it replaces that one — and only that one: a third written after the refusal refuses it again.
	term.keys("/checkpoint edit", "Enter")
	term.waitFor("Your edit is kept: /checkpoint edit opens it again")
	setFromShell := func(goal string) {
		t.Helper()
		get := exec.Command(binary, "--data-dir", data, "--config", cfg, "checkpoint", sessionID)
		get.Dir = ws
		doc, err := get.Output()
		if err != nil {
			t.Fatalf("checkpoint on the command line: %v", err)
		}
		set := exec.Command(binary, "--data-dir", data, "--config", cfg, "checkpoint", sessionID, "--set", "-")
		set.Dir = ws
		set.Stdin = strings.NewReader(regexp.MustCompile(`"goal": ".*?",`).ReplaceAllString(string(doc), `"goal": "`+goal+`",`))
		if out, err := set.CombinedOutput(); err != nil || !strings.Contains(string(out), "is replaced") {
			t.Fatalf("checkpoint --set on the command line: %v\n%s", err, out)
		}
	}
	setFromShell("Set from the shell")
	term.sendWhenFree("/checkpoint edit", "the checkpoint changed since this edit began")
	term.sendWhenFree("/checkpoint", "Set from the shell") // what the refusal told the user to look at
	setFromShell("Set from the shell again")
	term.sendWhenFree("/checkpoint edit", "the checkpoint changed since this edit began")
	term.keys("/checkpoint edit", "Enter")
	term.waitFor("Checkpoint saved: the next request sends it")
	term.keys("/checkpoint", "Enter")
	term.waitFor("Edited in the terminal")
	// The workspace's memories, through the daemon: listed, one deleted by its number.
	term.keys("/memories", "Enter")
	term.waitFor("1. Tests run with make test.")
	term.keys("/memories delete 1")
	term.waitFor("› /memories delete 1")
	term.keys("Enter")
	term.waitFor(`Deleted the memory "Tests run with make test."`)
	// A turn run on the command line into this session, through the same daemon, appends without a rewrite:
	// the open chat reads the session again and draws it (whatever became of the turn: the script is spent).
	prompt := exec.Command(binary, "--data-dir", data, "--config", cfg, "prompt", "--session", sessionID, "asked from the shell")
	prompt.Dir = ws
	_ = prompt.Run()
	term.waitFor("asked from the shell")
	term.keys("/exit", "Enter")
	term.waitFor("the session works in " + ws)
	term.waitFor("CHAT-EXIT=0")

	// --new left before the first message stores nothing: chat then still continues the session above.
	term.tmux("respawn-pane", "-k", "-t", "0", strings.Replace(chat, " chat ", " chat --new ", 1))
	term.waitFor("A new session starts with your first message")
	term.keys("C-d")
	term.waitFor("CHAT-EXIT=0")
	continues()

	// A session ID that names none fails before the screen is taken, saying what to do.
	term.tmux("respawn-pane", "-k", "-t", "0", strings.Replace(chat, " chat ", " chat --session bogus ", 1))
	term.waitFor("CHAT-EXIT=1")
	term.waitFor(`there is no session "bogus"`)
	pid := ownerPID(t, data)
	for deadline := time.Now().Add(30 * time.Second); osproc.Alive(pid); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shared daemon %d did not leave after its idle time", pid)
		}
	}
}

// TestChat_WhatItRefuses: chat says what to do, in the user's words, when it is asked for two sessions at
// once or has no terminal.
func TestChat_WhatItRefuses(t *testing.T) {
	data := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "--session", "abcd", "--new"}, "--session continues a session and --new starts one: give one of them"},
		{[]string{"chat"}, "chat needs a terminal: for scripts use `alisio-lsp prompt TEXT`"},
	} {
		_, errOut, code := cli(t, data, "", c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "if any flags in the group") {
			t.Errorf("alisio-lsp %s: exit %d, %q", strings.Join(c.args, " "), code, errOut)
		}
	}
}

// TestChat_ItsOwnConfig: a chat given --config talks to the model that file names, also when the shared daemon
// was started by another chat with another file (the daemon then runs on).
func TestChat_ItsOwnConfig(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	modelOf := func(name string) string {
		srv := providertest.New(providertest.Script{Replies: []providertest.Reply{{Text: "This is model " + name + "."}}, Loop: true})
		hs := httptest.NewServer(srv)
		t.Cleanup(hs.Close)
		return configFor(t, hs.URL)
	}
	cfgA, cfgB := modelOf("A"), modelOf("B")
	data, ws := t.TempDir(), t.TempDir()
	chatWith := func(cfg string) string {
		return fmt.Sprintf("env ALISIO_DAEMON_IDLE=1s %s --data-dir %s --config %s chat --new --workspace %s; echo CHAT-EXIT=$?; sleep 600", binary, data, cfg, ws)
	}
	// ask opens a chat with cfg in a terminal of its own and asks which model answers.
	ask := func(name, cfg string) terminal {
		term := terminal{t: t, socket: fmt.Sprintf("alisio-chat-%s-%d", name, os.Getpid())}
		term.tmux("new-session", "-d", "-x", "100", "-y", "30", chatWith(cfg))
		t.Cleanup(func() { _ = exec.Command("tmux", "-L", term.socket, "kill-server").Run() })
		term.waitFor("A new session starts with your first message")
		term.keys("who are you", "Enter")
		term.waitFor("This is model " + name + ".")
		return term
	}
	first := ask("A", cfgA)
	second := ask("B", cfgB) // the daemon runs with A's file: this chat still has B's
	// The first chat keeps its own.
	first.keys("and now", "Enter")
	first.wait("model A twice", func(s string) bool { return strings.Count(s, "This is model A.") == 2 })
	for _, term := range []terminal{second, first} {
		term.keys("/exit", "Enter")
		term.waitFor("CHAT-EXIT=0")
	}
	pid := ownerPID(t, data)
	for deadline := time.Now().Add(30 * time.Second); osproc.Alive(pid); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the shared daemon %d did not leave after its idle time", pid)
		}
	}
}
