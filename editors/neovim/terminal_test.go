package neovim_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
)

// tmux runs a tmux command on the test's own server (socket name), failing the test on an error.
func tmux(t *testing.T, socket string, args ...string) string {
	t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", socket}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestNeovim_InATerminal: the plugin in Neovim's own user interface, drawn in a real terminal (tmux) — Debian's
// 0.7.2 as a terminal UI, and 0.10 (ALISIO_NVIM) as a remote UI attached to a headless server: :Alisio opens
// the chat with the input focused, a prompt typed there streams the reply into the chat, the statusline draws
// the meter, and :AlisioContext opens beside it. The screens are kept in docs/ when ALISIO_SCREENSHOTS is set.
func TestNeovim_InATerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{Text: "Hello from the terminal.\n\n```go\nfunc main() {}\n```"},
		{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "edit_file", Arguments: `{"path":"main.go","oldText":"package main","newText":"package main // reviewed"}`}},
			DelayMs: 1500},
		{Text: "Edited main.go."},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ws, data := workspace(t)
	here, _ := filepath.Abs(".")
	config := filepath.Join(t.TempDir(), "alisio.json")
	if err := os.WriteFile(config, []byte(`{"provider":{"kind":"openai","baseURL":"`+hs.URL+`/v1","model":"alisio-test"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	init := filepath.Join(t.TempDir(), "init.lua")
	if err := os.WriteFile(init, []byte(fmt.Sprintf(`vim.opt.rtp:prepend(%q)
vim.cmd('runtime plugin/alisio.lua')
require('alisio').setup({ cmd = { %q, '--config', %q, 'serve' } })
vim.o.laststatus = 2
vim.o.statusline = "%%f%%=%%{v:lua.require'alisio'.statusline()} "
`, here, binary, config)), 0o644); err != nil {
		t.Fatal(err)
	}
	socket := fmt.Sprintf("alisio-test-%d", os.Getpid())
	env := []string{"XDG_DATA_HOME=" + data, "XDG_STATE_HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir()}
	nvimArgs := fmt.Sprintf("%s -u %s -i NONE %s", nvimCommand, init, filepath.Join(ws, "main.go"))
	ui := "terminal UI"
	if os.Getenv("ALISIO_NVIM") != "" {
		// Neovim 0.10 from the chroot: a headless server, and its remote UI in the terminal.
		ui = "remote UI"
		listen := filepath.Join(t.TempDir(), "nvim.sock")
		ctx, cancel := context.WithCancel(context.Background())
		server := exec.CommandContext(ctx, nvimCommand, "--headless", "--listen", listen, "-u", init, "-i", "NONE", filepath.Join(ws, "main.go"))
		server.Env = append(os.Environ(), env...)
		if err := server.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = server.Wait() }()
		for i := 0; i < 100; i++ {
			if _, err := os.Stat(listen); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		nvimArgs = fmt.Sprintf("%s --server %s --remote-ui", nvimCommand, listen)
	}
	tmux(t, socket, "new-session", "-d", "-x", "160", "-y", "42", "-e", env[0], "-e", env[1], "-e", env[2], "-c", ws, nvimArgs)
	defer exec.Command("tmux", "-L", socket, "kill-server").Run()
	screen := func() string { return tmux(t, socket, "capture-pane", "-p", "-t", "0") }
	wait := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			s := screen()
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: timed out waiting for %s; the screen:\n%s", ui, what, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wait("main.go", func(s string) bool { return strings.Contains(s, "package main") })
	wait("the meter", func(s string) bool { return strings.Contains(s, "alisio") })
	tmux(t, socket, "send-keys", "-t", "0", ":Alisio", "Enter")
	wait("the chat's input hint", func(s string) bool { return strings.Contains(s, "Ask here") })
	// The input has the cursor: what is typed is the prompt; <CR> in normal mode sends it.
	tmux(t, socket, "send-keys", "-t", "0", "isay hello", "Escape")
	tmux(t, socket, "send-keys", "-t", "0", "Enter")
	wait("the reply in the chat", func(s string) bool { return strings.Contains(s, "Hello from the terminal.") })
	meter := regexp.MustCompile(`alisio [▰▱│]+ [\d.]+k?/[\d.]+k?`)
	chat := wait("the meter after the turn", func(s string) bool { return meter.MatchString(s) && strings.Contains(s, "func main() {}") })
	tmux(t, socket, "send-keys", "-t", "0", ":AlisioContext", "Enter")
	context := wait("the context view", func(s string) bool { return strings.Contains(s, "# Context of session") })
	if !strings.Contains(chat, "## You") && !strings.Contains(chat, "say hello") {
		t.Errorf("%s: the prompt is not in the chat:\n%s", ui, chat)
	}
	if dir := os.Getenv("ALISIO_SCREENSHOTS"); dir != "" { // refreshes docs/ when asked, never by default
		name := "neovim-terminal-0.7.txt"
		if ui == "remote UI" {
			name = "neovim-terminal-0.10-remote-ui.txt"
		}
		_ = os.WriteFile(filepath.Join("..", "..", dir, name), []byte(fmt.Sprintf("Neovim's %s in tmux (TestNeovim_InATerminal), after a turn:\n\n%s\nand :AlisioContext:\n\n%s", ui, chat, context)), 0o644)
	}
	// The terminal shrinks: the chat keeps its share of the width (Neovim would take the lost columns from it,
	// the rightmost window, down to one). A compaction's sentence (here why there is nothing to compact yet) is
	// longer than the 80-column command line: it is cut to fit there, so it never stops for Enter (which takes
	// the next key typed), and the chat has the whole of it.
	tmux(t, socket, "send-keys", "-t", "0", ":wincmd t | vsplit", "Enter") // two windows beside each other, left of the chat
	tmux(t, socket, "resize-window", "-t", "0", "-x", "80", "-y", "30")
	tmux(t, socket, "send-keys", "-t", "0", ":AlisioCompact", "Enter")
	compacted := wait("the compaction's sentence and its note in the chat", func(s string) bool {
		return strings.Contains(s, "Alisio: compaction skipped") && strings.Contains(s, "ⓘ compaction skipped")
	})
	if strings.Contains(compacted, "Press ENTER") || !strings.Contains(compacted, "…") {
		t.Errorf("%s: the compaction's sentence is not cut to the command line:\n%s", ui, compacted)
	}
	if !regexp.MustCompile(`│ⓘ compaction skipped: not enough`).MatchString(compacted) {
		t.Errorf("%s: the chat lost its width when the terminal shrank:\n%s", ui, compacted)
	}
	// So is the answer to a command the user gave, when longer than the command line: cut there, with where
	// the whole of it is, and in full in the chat.
	tmux(t, socket, "send-keys", "-t", "0", ":AlisioEditCheckpoint", "Enter")
	answered := wait("the answer to :AlisioEditCheckpoint and its note in the chat", func(s string) bool {
		return strings.Contains(s, "Alisio: this session has no") && strings.Contains(s, "ⓘ this session has no checkpoint")
	})
	if strings.Contains(answered, "Press ENTER") || !strings.Contains(answered, "… (:Alisio shows all)") {
		t.Errorf("%s: the answer to :AlisioEditCheckpoint is not cut to the command line:\n%s", ui, answered)
	}
	tmux(t, socket, "send-keys", "-t", "0", ":Alisio", "Enter", "ityped after it", "Escape")
	wait("the keys typed after the sentence, in the chat's input", func(s string) bool { return strings.Contains(s, "typed after it") })
	// A review that comes while the user types waits for them to leave insert mode: its tab would take the
	// keys. The prompt is sent, and typing goes on in the input while the model proposes an edit.
	tmux(t, socket, "send-keys", "-t", "0", "ccedit main.go", "Escape", "Enter", "inext words")
	asked := wait("the review said, not opened", func(s string) bool { return strings.Contains(s, "wants to change main.go: its review") })
	tmux(t, socket, "send-keys", "-t", "0", " typed on")
	typed := wait("the typing kept in the input", func(s string) bool { return strings.Contains(s, "next words typed on") })
	if strings.Contains(asked, "main // reviewed") || strings.Contains(typed, "main // reviewed") || strings.Contains(typed, "Press ENTER") {
		t.Errorf("%s: the review took the screen while the user typed:\n%s", ui, typed)
	}
	tmux(t, socket, "send-keys", "-t", "0", "Escape")
	wait("the review, once out of insert mode", func(s string) bool {
		return strings.Contains(s, "package main // reviewed") && strings.Contains(s, "ga accepts")
	})
	tmux(t, socket, "send-keys", "-t", "0", "ga")
	wait("the reply after the accepted edit", func(s string) bool { return strings.Contains(s, "Edited main.go.") })
	if b, err := os.ReadFile(filepath.Join(ws, "main.go")); err != nil || !strings.Contains(string(b), "// reviewed") {
		t.Errorf("%s: the accepted edit is not in main.go: %q %v", ui, b, err)
	}
	// Wider, then narrow again: no window is squeezed to a sliver (Neovim gives and takes the columns of one),
	// and a chat longer than its window still shows its end.
	tmux(t, socket, "send-keys", "-t", "0", ":lua local l = {} for i = 1, 120 do l[i] = 'earlier line ' .. i end require('alisio.chat').append_lines(l)", "Enter")
	wait("the long chat's end", func(s string) bool { return strings.Contains(s, "earlier line 120") })
	tmux(t, socket, "resize-window", "-t", "0", "-x", "160", "-y", "30")
	time.Sleep(300 * time.Millisecond)
	tmux(t, socket, "resize-window", "-t", "0", "-x", "80", "-y", "30")
	time.Sleep(300 * time.Millisecond)
	if s := screen(); !strings.Contains(s, "earlier line 120") {
		t.Errorf("%s: after 80 → 160 → 80 columns the chat no longer shows its end:\n%s", ui, s)
	}
	widths := filepath.Join(t.TempDir(), "widths")
	tmux(t, socket, "send-keys", "-t", "0", fmt.Sprintf(":lua vim.fn.writefile(vim.tbl_map(vim.api.nvim_win_get_width, vim.api.nvim_tabpage_list_wins(0)), %q)", widths), "Enter")
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got, _ = os.ReadFile(widths)
	}
	for _, w := range strings.Fields(string(got)) {
		if n, _ := strconv.Atoi(w); n < 10 {
			t.Errorf("%s: after 80 → 160 → 80 columns a window is %d columns wide (widths %s)", ui, n, strings.Join(strings.Fields(string(got)), " "))
		}
	}
}
