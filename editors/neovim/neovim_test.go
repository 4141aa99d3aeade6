// Package neovim_test drives the Lua plugin in a real headless Neovim (Debian's 0.7.2 in CI) against the real
// alisio-lsp binary and the local test provider.
package neovim_test

import (
	"context"
	"encoding/json"
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
	"github.com/alisio-lsp/alisio-lsp/storage"
)

var binary string

// nvimCommand is the Neovim the tests run: $ALISIO_NVIM (scripts/nvim-trixie runs Neovim 0.10 from the trixie
// chroot), else nvim from PATH.
var nvimCommand = "nvim"

func TestMain(m *testing.M) {
	if n := os.Getenv("ALISIO_NVIM"); n != "" {
		nvimCommand = n
	}
	if _, err := exec.LookPath(nvimCommand); err != nil {
		fmt.Println("note: nvim is not installed (apt-get install neovim); the Neovim plugin tests are skipped")
		os.Exit(0)
	}
	if out, err := exec.Command(nvimCommand, "--version").Output(); err == nil {
		fmt.Printf("testing with %s\n", strings.SplitN(string(out), "\n", 2)[0])
	}
	dir, err := os.MkdirTemp("", "alisio-nvim")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "alisio-lsp")
	if out, err := exec.Command("go", "build", "-o", binary, "../../cmd/alisio-lsp").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	Results map[string]any
	Notes   []struct {
		Msg   string
		Level int
	}
}

// nvim runs tests/<script> headless with the plugin on the runtimepath and returns what it recorded.
func nvim(t *testing.T, script string, env ...string) result {
	t.Helper()
	here, _ := filepath.Abs(".")
	return nvimWith(t, []string{"-c", "runtime plugin/alisio.lua", "-c", "luafile " + filepath.Join(here, "tests", script)}, env...)
}

// nvimWith runs Neovim headless with the plugin on the runtimepath and the arguments args, and returns what
// its test scripts recorded.
func nvimWith(t *testing.T, args []string, env ...string) result {
	t.Helper()
	here, _ := filepath.Abs(".")
	out := filepath.Join(t.TempDir(), "out.json")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvimCommand, append([]string{"--headless", "-u", "NONE", "-i", "NONE", "--cmd", "set rtp^=" + here}, args...)...)
	cmd.Env = append(os.Environ(), append(env, "ALISIO_OUT="+out, "ALISIO_TESTS="+filepath.Join(here, "tests"), "ALISIO_BIN="+binary)...)
	output, err := cmd.CombinedOutput()
	var r result
	raw, rerr := os.ReadFile(out)
	if rerr == nil {
		_ = json.Unmarshal(raw, &r)
	}
	if err != nil || rerr != nil {
		t.Fatalf("nvim %s: %v\n%s\nrecorded: %s", strings.Join(args, " "), err, output, raw)
	}
	return r
}

func workspace(t *testing.T) (ws, data string) {
	t.Helper()
	ws, data = t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, data
}

func lines(v any) string {
	var out []string
	for _, l := range v.([]any) {
		out = append(out, fmt.Sprint(l))
	}
	return strings.Join(out, "\n")
}

// buildAndHello serves a model that runs one build command (6,000 chars of output) and says hello.
func buildAndHello(t *testing.T) (*providertest.Server, *httptest.Server) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{{ID: "call_build", Name: "run_command", Arguments: `{"command":"head -c 6000 /dev/zero | tr '\\0' b"}`}}},
		{Text: "hello from the test provider"},
	}})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return srv, hs
}

// TestNeovim_MeterPromptCompact: the client attaches, the statusline shows the meter once the workspace has a
// session, :AlisioPrompt streams the turn, :AlisioCompact parser reaches the summarizer as the focus and
// changes the statusline; :AlisioCheckpoint, :AlisioContext and :checkhealth alisio show what they should.
func TestNeovim_MeterPromptCompact(t *testing.T) {
	srv, hs := buildAndHello(t)
	ws, data := workspace(t)
	r := nvim(t, "meter_compact.lua", "ALISIO_URL="+hs.URL+"/v1", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	res := r.Results
	t.Logf("recorded: before %q, compact %q → %q; notes %v", res["before_prompt"], res["before_compact"], res["after_compact"], r.Notes)
	if res["before_prompt"] != "alisio –" {
		t.Errorf("the statusline before any session: %q; want %q", res["before_prompt"], "alisio –")
	}
	prompt := lines(res["prompt_buffer"])
	if !strings.Contains(prompt, "→ run_command") || !strings.Contains(prompt, "hello from the test provider") {
		t.Errorf("the prompt buffer:\n%s", prompt)
	}
	// "alisio ▰▱▱▱▱▱▱│▱ 5.1k/20k": the request's tokens of the limit.
	tokens := func(s string) float64 {
		m := regexp.MustCompile(`^alisio [▰▱│]+ ([\d.]+)(k?)/[\d.]+k?`).FindStringSubmatch(s)
		if m == nil {
			return -1
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		if m[2] == "k" {
			n *= 1000
		}
		return n
	}
	if top := fmt.Sprint(res["chat_top_after_compact"]); !strings.HasPrefix(top, "── ") {
		t.Errorf("after :AlisioCompact the chat's first line in view is %q; want the compaction's boundary", top)
	}
	before, after := tokens(fmt.Sprint(res["before_compact"])), tokens(fmt.Sprint(res["after_compact"]))
	if before <= 0 || after < 0 || after >= before {
		t.Errorf("statusline %q → %q: the compaction must lower the meter", res["before_compact"], res["after_compact"])
	}
	var errorsAgain []any
	for _, n := range res["compact_again"].([]any) {
		if n.(map[string]any)["level"] == float64(4) { // vim.log.levels.ERROR
			errorsAgain = append(errorsAgain, n)
		}
	}
	if !strings.Contains(fmt.Sprint(res["compact_again"]), "compaction skipped") || len(errorsAgain) > 0 {
		t.Errorf(":AlisioCompact again: %v", res["compact_again"])
	}
	// The statusline as Neovim renders it (vim.o.statusline with the meter), kept in docs/ as its picture.
	picture := fmt.Sprintf("The Neovim statusline with the meter, as nvim_eval_statusline renders it (TestNeovim_MeterPromptCompact):\n\n"+
		"after a turn:                [%s]\nafter :AlisioCompact parser: [%s]\n", res["rendered_before"], res["rendered_after"])
	if !strings.Contains(picture, "alisio ") {
		t.Errorf("rendered statusline: %s", picture)
	}
	if dir := os.Getenv("ALISIO_SCREENSHOTS"); dir != "" { // refreshes docs/ when asked, never by default
		_ = os.WriteFile(filepath.Join("..", "..", dir, "neovim-statusline.txt"), []byte(picture), 0o644)
	}
	focus := false
	for _, req := range srv.Requests() {
		// Asked for standalone, or in the suffix form at the end of the agent's own request.
		raw, _ := json.Marshal(req["messages"])
		focus = focus || strings.Contains(string(raw), "focus on: parser")
	}
	if !focus {
		t.Error(":AlisioCompact parser did not reach the summarizer as the focus")
	}
	if cp := lines(res["checkpoint"]); !strings.Contains(cp, "# Checkpoint") || !strings.Contains(cp, "## Goal") {
		t.Errorf("checkpoint buffer:\n%s", cp)
	}
	if res["view_beside_file"] != true || res["view_modifiable"] != false || res["file_after_q"] != true {
		t.Errorf("the checkpoint view beside the file %v, modifiable %v; the file still shown after q %v",
			res["view_beside_file"], res["view_modifiable"], res["file_after_q"])
	}
	t.Logf("the :AlisioContext view:\n%s", lines(res["context"]))
	if ctx := lines(res["context"]); !strings.Contains(ctx, "tool catalog") || !strings.Contains(ctx, "Hard limit") ||
		!strings.Contains(ctx, "Compaction starts at 85% of limits.maxContextChars") || !strings.Contains(ctx, "the tool catalog is sent besides") || !strings.Contains(ctx, "Next model call: ") ||
		!strings.Contains(ctx, "\n  checkpoint   ") || !strings.Contains(ctx, "\nPrompt cache: ") {
		t.Errorf("context buffer:\n%s", ctx)
	}
	if h := lines(res["health"]); !strings.Contains(h, "OK") || !strings.Contains(h, "alisio-lsp") || !strings.Contains(h, "server is running for the workspace") || strings.Contains(h, "(client") ||
		!strings.Contains(h, "the settings are valid") || !strings.Contains(h, "the provider answers at "+hs.URL+"/v1") {
		t.Errorf("checkhealth:\n%s", h)
	}
}

// TestNeovim_Recover: a session left with an uncertain call shows it in the statusline; :AlisioRecover!
// records the unknown outcome and the warning goes.
func TestNeovim_Recover(t *testing.T) {
	ws, data := workspace(t)
	file := filepath.Join(t.TempDir(), "crashed.json")
	if err := os.WriteFile(file, []byte(`[{"role":"user","content":"deploy it"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_deploy","type":"function","function":{"name":"run_command","arguments":"{\"command\":\"make deploy\"}"}}]}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "--data-dir", filepath.Join(data, "alisio"), "sessions", "import", file, "--workspace", ws).CombinedOutput(); err != nil {
		t.Fatalf("import: %v %s", err, out)
	}
	r := nvim(t, "recover.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	if before, after := fmt.Sprint(r.Results["before"]), fmt.Sprint(r.Results["after"]); !strings.Contains(before, "uncertain") || strings.Contains(after, "uncertain") {
		t.Fatalf("statusline %q → %q", before, after)
	}
}

// TestNeovim_EarlierMessages: a long, compacted session opens on its last 200 messages with a first line that
// says how many earlier ones are not shown; :AlisioEarlier and <CR> on that line show them in place. Views
// (:AlisioContext) open beside the chat and its input, never in their windows, and q closes them.
func TestNeovim_EarlierMessages(t *testing.T) {
	ws, data := workspace(t)
	var msgs []string
	for i := 0; i < 225; i++ {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"question %d"},{"role":"assistant","content":"answer %d"}`, i, i))
	}
	file := filepath.Join(t.TempDir(), "long.json")
	if err := os.WriteFile(file, []byte("["+strings.Join(msgs, ",")+"]"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(data, "alisio")
	out, err := exec.Command(binary, "--data-dir", store, "sessions", "import", file, "--workspace", ws).Output()
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if out, err := exec.Command(binary, "--data-dir", store, "compact", strings.TrimSpace(string(out))).CombinedOutput(); err != nil {
		t.Fatalf("compact: %v %s", err, out)
	}
	r := nvim(t, "earlier.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	first := lines(r.Results["first_page"])
	if !strings.HasPrefix(first, "▲ 251 compacted originals not shown · <CR> on this line or :AlisioEarlier shows 200 more") ||
		!strings.Contains(first, "── 446 messages compacted into a checkpoint, now ") ||
		!strings.Contains(first, "### The last 195 of the 446 compacted originals") {
		t.Errorf("first page:\n%s", first[:min(len(first), 800)])
	}
	if r.Results["reading"] != "question 223" || r.Results["still_reading"] != "question 223" {
		t.Errorf("the cursor was on %q, and on %q after :AlisioEarlier", r.Results["reading"], r.Results["still_reading"])
	}
	if second := lines(r.Results["second_page"]); !strings.HasPrefix(second, "▲ 51 compacted originals not shown · <CR> on this line or :AlisioEarlier shows 51 more") {
		t.Errorf("after :AlisioEarlier:\n%s", second[:min(len(second), 300)])
	}
	if every := lines(r.Results["every"]); !strings.HasPrefix(every, "── 446 messages compacted into a checkpoint, ") || strings.Contains(every, "now ") ||
		!strings.Contains(every, "\nquestion 0\n") {
		t.Errorf("every message:\n%s", every[:min(len(every), 300)])
	}
	if r.Results["context_hidden_lines"] != float64(0) || r.Results["chat_still_shown"] != true ||
		!strings.Contains(lines(r.Results["context_lines"]), "Next model call:") {
		t.Errorf(":AlisioContext from the chat: %v lines folded away, chat still shown %v:\n%s",
			r.Results["context_hidden_lines"], r.Results["chat_still_shown"], lines(r.Results["context_lines"]))
	}
	if r.Results["hint_empty"] != float64(1) || r.Results["hint_typed"] != float64(0) || r.Results["hint_emptied"] != float64(1) {
		t.Errorf("the input's placeholder: %v when empty, %v once typed in, %v emptied again", r.Results["hint_empty"], r.Results["hint_typed"], r.Results["hint_emptied"])
	}
	if r.Results["closed_by_q"] != true || r.Results["input_still_shown"] != true || r.Results["input_back"] != true {
		t.Errorf("q closes the view %v; the input keeps its window under :AlisioContext %v, and comes back with :Alisio %v",
			r.Results["closed_by_q"], r.Results["input_still_shown"], r.Results["input_back"])
	}
	if r.Results["input_height"] != float64(4) {
		t.Errorf("the input is %v lines high once the view is closed, want 4", r.Results["input_height"])
	}
}

// TestNeovim_NoFileYet: a command run before any file was opened, in a directory of no project, says how to
// start the daemon, not that it stopped, and starts nothing; :AlisioRestart then starts it there, and says so;
// :AlisioLog opens the log.
//
// Then, before the workspace has a session, :AlisioContext shows what the first request will hold, and
// :'<,'>AlisioAdd and :AlisioAdd put lines of a file, and the whole file, in the chat's input.
func TestNeovim_NoFileYet(t *testing.T) {
	cwd := t.TempDir()
	r := nvim(t, "no_file.lua", "ALISIO_CWD="+cwd, "XDG_DATA_HOME="+t.TempDir())
	if note, _ := r.Results["note"].(string); !strings.Contains(note, cwd+" is in no project.") ||
		!strings.Contains(note, "Open a file of your project, or :AlisioRestart to start here") || r.Results["started"] != false {
		t.Fatalf("%+v", r.Results)
	}
	if log := fmt.Sprint(r.Results["daemon_log"]); !strings.HasSuffix(log, filepath.Join("alisio", "daemon.log")) {
		t.Errorf(":AlisioLog with the daemon running opened %s, not the shared daemon's log", log)
	}
	if r.Results["log_opened"] != true || r.Results["restart_note"] != "Alisio: alisio-lsp started for "+cwd {
		t.Fatalf(":AlisioLog, :AlisioRestart: %+v", r.Results)
	}
	if ctx := lines(r.Results["first_context"]); !strings.Contains(ctx, "# Context of the first request (no session yet") ||
		!strings.Contains(ctx, "instructions") || !strings.Contains(ctx, "tool catalog") {
		t.Fatalf(":AlisioContext before a session:\n%s", ctx)
	}
	want := "`main.go` lines 3–5:\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n`main.go`:\n```go\npackage main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n```"
	if got := lines(r.Results["input"]); got != want || r.Results["in_input"] != true {
		t.Fatalf(":AlisioAdd put in the input (cursor there: %v):\n%s\nwant:\n%s", r.Results["in_input"], got, want)
	}
}

// TestNeovim_NoFileInAProject: `nvim` in a project's directory, then :Alisio: the daemon starts for the project
// (said in a note) and the chat opens on the workspace's session; commands answer.
func TestNeovim_NoFileInAProject(t *testing.T) {
	ws, data := workspace(t)
	file := filepath.Join(t.TempDir(), "s.json")
	doc := `[{"role":"user","content":"a question"},{"role":"assistant","content":"the answer to the question"}]`
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(binary, "--data-dir", filepath.Join(data, "alisio"), "sessions", "import", file, "--workspace", ws).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := nvim(t, "no_file_project.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	if r.Results["root"] != ws || r.Results["attached_buffers"] != float64(0) || len(r.Notes) != 1 ||
		!strings.Contains(r.Notes[0].Msg, "started for "+ws) || !strings.Contains(lines(r.Results["context"]), "assistant text") {
		t.Fatalf("%+v", r)
	}
}

// TestNeovim_SetupInInit: `nvim main.go` with setup in init.lua attaches the file once it is loaded, and never
// tries before (Neovim 0.7 logged "buf_attach_client called on unloaded buffer" at every start).
func TestNeovim_SetupInInit(t *testing.T) {
	ws, data := workspace(t)
	tests, _ := filepath.Abs("tests")
	r := nvimWith(t, []string{"--cmd", "luafile " + filepath.Join(tests, "init_setup.lua"), "-c", "runtime plugin/alisio.lua",
		"-c", "luafile " + filepath.Join(tests, "init_attached.lua"), filepath.Join(ws, "main.go")}, "XDG_DATA_HOME="+data)
	if r.Results["file"] != "main.go" || r.Results["unloaded_attaches"] != float64(0) {
		t.Fatalf("%+v", r.Results)
	}
}

// TestNeovim_HomeAsWorkspace: a file of no project opened from the home directory makes the home directory the
// workspace; the user is told what the agent's tools can then reach.
func TestNeovim_HomeAsWorkspace(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "notes.md"), []byte("# notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := nvim(t, "home_root.lua", "HOME="+home, "XDG_DATA_HOME="+t.TempDir())
	if r.Results["root"] != home || len(r.Notes) != 1 || r.Notes[0].Level != 3 ||
		!strings.Contains(r.Notes[0].Msg, "above notes.md: the workspace is your home directory, and the agent's tools can read and change any file in it") {
		t.Fatalf("%+v", r)
	}
}

// TestNeovim_MissingBinary: setup names the missing program and how to install it (once Neovim has started,
// not as an error of the user's init.lua), and so does a command that would start it; :checkhealth too.
func TestNeovim_MissingBinary(t *testing.T) {
	r := nvim(t, "missing_binary.lua")
	if r.Results["setup_ok"] != false || r.Results["noted_during_setup"] != 0.0 || len(r.Notes) != 2 || r.Results["prompt_error"] != "" {
		t.Fatalf("%+v", r)
	}
	if chat := lines(r.Results["chat"]); !strings.Contains(chat, "**Not sent:** alisio-lsp is not running") {
		t.Fatalf("the chat after a prompt that could not be sent:\n%s", chat)
	}
	for _, n := range r.Notes { // setup's, then :AlisioPrompt's (not Neovim's generic spawning error)
		if !strings.Contains(n.Msg, "'/nonexistent/alisio-lsp' was not found") || !strings.Contains(n.Msg, "go build") || n.Level != 4 {
			t.Fatalf("%+v", r)
		}
	}
	if h := lines(r.Results["health"]); !strings.Contains(h, "ERROR") || !strings.Contains(h, "go build -o ~/.local/bin/alisio-lsp") {
		t.Fatalf("checkhealth:\n%s", h)
	}
}

// TestNeovim_Chat: a user's first minutes, as a test: setup with a configuration file and no settings starts
// quietly; the statusline shows "alisio –" at once; :AlisioSessions, :AlisioContext, :AlisioCheckpoint and
// :AlisioRecover answer plainly in a fresh workspace (no "invalid params", no question); :help alisio works;
// :Alisio opens the chat, <CR> in its input sends, the turn streams a multi-line reply in place with the
// spinner and $/progress shown; tool calls are one line each with their details folded; <C-c> stops a turn;
// :AlisioCompact draws the boundary with the originals folded behind it; q closes the chat; the statusline
// clears when the server stops and :AlisioRestart brings it back.
func TestNeovim_Chat(t *testing.T) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{DelayMs: 1500, ToolCalls: []providertest.ToolCall{{ID: "call_build", Name: "run_command", Arguments: `{"command":"head -c 6000 /dev/zero | tr '\\0' b; exit 2"}`}}},
		{Text: "The build failed with exit code 2.\nLine two of the reply, long enough to arrive in several streamed pieces."},
		{DelayMs: 20000, Text: "too late"},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ws, data := workspace(t)
	config := filepath.Join(t.TempDir(), "alisio.json")
	if err := os.WriteFile(config, []byte(`{"provider":{"kind":"openai","baseURL":"`+hs.URL+`/v1","model":"alisio-test"},"limits":{"maxContextChars":20000}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := nvim(t, "chat.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data, "ALISIO_CONFIG="+config)
	res := r.Results
	for _, n := range r.Notes {
		if strings.Contains(n.Msg, "invalid params") || strings.Contains(n.Msg, "must be a JSON object") || strings.Contains(n.Msg, "alisio/") {
			t.Errorf("a message a user should not see: %q", n.Msg)
		}
	}
	if res["fresh_statusline"] != "alisio –" {
		t.Errorf("statusline in a fresh workspace: %q, want %q", res["fresh_statusline"], "alisio –")
	}
	if res["recover_asked"] != false {
		t.Error(":AlisioRecover asked a question with nothing to recover")
	}
	noted := func(sub string) bool {
		for _, n := range r.Notes {
			if strings.Contains(n.Msg, sub) {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"no sessions in this workspace yet", "nothing to recover", ":AlisioPrompt"} {
		if !noted(want) {
			t.Errorf("no message saying %q: %+v", want, r.Notes)
		}
	}
	if res["help"] != true {
		t.Error(":help alisio failed")
	}
	if res["chat_filetype"] != "markdown" {
		t.Errorf("chat filetype %v", res["chat_filetype"])
	}
	if s, _ := res["spinner"].(string); !strings.HasPrefix(s, "alisio") {
		t.Errorf("no spinner in the statusline during the turn: %v", res["spinner"])
	}
	if p, _ := res["progress"].(string); p == "" {
		t.Errorf("no $/progress during the turn: %v", res["progress"])
	}
	if rv, _ := res["review"].(map[string]any); rv["kind"] != "command" || !strings.Contains(lines(res["review_lines"]), "ga runs it · gr skips it") {
		t.Errorf("the question before the command: %v\n%s", res["review"], lines(res["review_lines"]))
	}
	chat := lines(res["chat_after_turn"])
	for _, want := range []string{"## You", "run the build\nand say hello", "## Alisio", "→ run_command head -c 6000 /dev/zero | tr '\\0' b; exit 2 · ✗ exit 2 (2k chars)",
		"The build failed with exit code 2.\nLine two of the reply, long enough to arrive in several streamed pieces."} {
		if !strings.Contains(chat, want) {
			t.Errorf("the chat after the turn lacks %q:\n%s", want, chat)
		}
	}
	if folds, _ := res["folds_after_turn"].([]any); len(folds) != 1 {
		t.Errorf("folds after the turn: %v (want the tool call's details)", res["folds_after_turn"])
	}
	after := lines(res["chat_after_compact"])
	if !strings.Contains(after, "compacted into a checkpoint") || !strings.Contains(after, "### Checkpoint") || !strings.Contains(after, "The compacted originals") {
		t.Errorf("the chat after :AlisioCompact:\n%s", after)
	}
	if b, k := strings.Index(after, "compacted into a checkpoint"), strings.LastIndex(after, "take your time"); b < 0 || k < b {
		t.Errorf("the boundary must head the conversation, before the kept turn:\n%s", after)
	}
	// The window shows the conversation, not blank lines past it: the boundary and the last prompt are in sight.
	if shown := lines(res["visible_after_compact"]); !strings.Contains(shown, "compacted into a checkpoint") || !strings.Contains(shown, "take your time") {
		t.Errorf("the chat's window after the compaction (%v lines high) shows:\n%s", res["chat_height"], shown)
	}
	if folds, _ := res["folds_after_compact"].([]any); len(folds) < 1 {
		t.Errorf("folds after the compaction: %v", res["folds_after_compact"])
	}
	if fmt.Sprint(res["folds_reopened"]) != fmt.Sprint(res["folds_after_compact"]) {
		t.Errorf("folds after reopening the chat %v; want those of the first drawing %v", res["folds_reopened"], res["folds_after_compact"])
	}
	if res["stop_mapped"] != true {
		t.Error("<C-c> is not mapped in the chat")
	}
	if res["chat_closed"] != true {
		t.Error("q did not close the chat")
	}
	if res["after_stop"] != "" || !strings.HasPrefix(fmt.Sprint(res["before_stop"]), "alisio ") {
		t.Errorf("statusline %q before and %q after the server stopped", res["before_stop"], res["after_stop"])
	}
	if !strings.HasPrefix(fmt.Sprint(res["after_restart"]), "alisio ") {
		t.Errorf("statusline after :AlisioRestart: %q", res["after_restart"])
	}
	if got := fmt.Sprint(res["folds_of_a_file_opened_from_the_chat"]); got != "[manual 0 manual 0]" {
		t.Errorf("a file opened from the chat's windows got their folds: %s", got)
	}
	if got := fmt.Sprint(res["root_after_restart_in_input"]); got != ws {
		t.Errorf(":AlisioRestart from the chat's input: workspace %q, want %q", got, ws)
	}
	if got := fmt.Sprint(res["root_after_start_in_input"]); got != ws {
		t.Errorf(":AlisioRestart from the chat's input after the server stopped: workspace %q, want the last one, %q", got, ws)
	}
}

// TestNeovim_Tools: :AlisioTools shows each tool source with its count, size and problem; picking an MCP
// server disables it in the client's settings, and the server drops it from the catalog at once.
func TestNeovim_Tools(t *testing.T) {
	ws, data := workspace(t)
	r := nvim(t, "tools.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	offered := lines(r.Results["offered"])
	for _, want := range []string{"built-in: 7 tools", "MCP server docs: 0 tools", "docs-mcp", "tool catalog:"} {
		if !strings.Contains(offered, want) {
			t.Errorf(":AlisioTools lacks %q:\n%s", want, offered)
		}
	}
	if picked := fmt.Sprint(r.Results["builtin_picked"]); !strings.Contains(picked, "pick an MCP server or a plugin") ||
		!strings.Contains(fmt.Sprint(r.Results["prompt"]), "to turn it on or off") {
		t.Errorf(":AlisioTools with the built-in tools picked said %q (prompt %q)", picked, r.Results["prompt"])
	}
	if r.Results["disabled"] != true {
		t.Errorf("the setting was not changed: %v", r.Results["disabled"])
	}
	if after := lines(r.Results["sources_after"]); strings.Contains(after, "docs") {
		t.Errorf("the disabled server is still a source: %s", after)
	}
}

// TestNeovim_Memories: :AlisioMemories lists the workspace's memories, oldest first, numbered, a memory of
// several lines on one line; picking one and answering "Delete it" deletes it from the store.
func TestNeovim_Memories(t *testing.T) {
	ws, data := workspace(t)
	st, err := storage.OpenDataDir(filepath.Join(data, "alisio"), storage.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMemories(ws, "s0", []string{"Tests run with make test.", "Release steps:\n1. make dist", "Never push to main."}); err != nil || st.Close() != nil {
		t.Fatal(err)
	}
	r := nvim(t, "memories.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	if offered := lines(r.Results["offered"]); !strings.Contains(offered, "Tests run with make test.\nRelease steps: 1. make dist\nNever push to main.") {
		t.Errorf(":AlisioMemories offered:\n%s", offered)
	}
	if prompts := lines(r.Results["prompts"]); !strings.Contains(prompts, "pick one to delete it") || !strings.Contains(prompts, `Delete the memory "Tests run with make test."?`) {
		t.Errorf("the questions:\n%s", prompts)
	}
	if after := lines(r.Results["after"]); strings.Contains(after, "make test") || !strings.HasPrefix(after, "Release steps") {
		t.Errorf("after deleting the first, :AlisioMemories offered:\n%s", after)
	}
}

// TestNeovim_SessionRemembered: the session picked with :AlisioSessions is the one the next Neovim in the
// workspace uses, though a later one is the workspace's most recent.
func TestNeovim_SessionRemembered(t *testing.T) {
	ws, data := workspace(t)
	first := nvim(t, "sessions_remembered.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data, "ALISIO_STEP=1")
	again := nvim(t, "sessions_remembered.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data, "ALISIO_STEP=2")
	if chosen := first.Results["chosen"]; chosen == nil || again.Results["used"] != chosen {
		t.Errorf("picked %v, the next Neovim uses %v", chosen, again.Results["used"])
	}
}

// TestNeovim_HealthFindsBadSettingsAndADeadProvider: :checkhealth alisio names an invalid setting (checked by
// alisio-lsp's own rules) and a provider that does not answer, each with what to do.
func TestNeovim_HealthFindsBadSettingsAndADeadProvider(t *testing.T) {
	r := nvim(t, "health_bad.lua")
	h := lines(r.Results["health"])
	for _, want := range []string{"the settings are invalid", "compaction.threshold", "the provider does not answer at http://127.0.0.1:9/v1", "Check provider.baseURL"} {
		if !strings.Contains(h, want) {
			t.Errorf("checkhealth lacks %q:\n%s", want, h)
		}
	}
}

// TestNeovim_HealthReadsTheConfigFile: a provider set in the --config file the plugin's command names is the
// one :checkhealth alisio checks (it said none was configured).
func TestNeovim_HealthReadsTheConfigFile(t *testing.T) {
	_, hs := buildAndHello(t)
	config := filepath.Join(t.TempDir(), "alisio.json")
	if err := os.WriteFile(config, []byte(`{"provider":{"kind":"openai","baseURL":"`+hs.URL+`/v1","model":"alisio-test"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := lines(nvim(t, "health_config.lua", "ALISIO_CONFIG="+config).Results["health"])
	if !strings.Contains(h, "the provider answers at "+hs.URL+"/v1 (model alisio-test)") || strings.Contains(h, "no provider configured") {
		t.Errorf("checkhealth with the provider in --config:\n%s", h)
	}
}

// TestNeovim_ReviewAndUndo: with the plugin the daemon asks before an edit; the edit opens as a diff in its own
// tab, ga accepts it and the edited file's buffer shows it at once; a new file rejected with gr is not written;
// :AlisioUndoTurn puts the file back and its buffer with it.
func TestNeovim_ReviewAndUndo(t *testing.T) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "edit_file", Arguments: `{"path":"main.go","oldText":"package main","newText":"package main // reviewed"}`},
			{ID: "c2", Name: "write_file", Arguments: `{"path":"new.txt","content":"not wanted\n"}`},
		}},
		{Text: "Marked."},
	}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	ws, data := workspace(t)
	r := nvim(t, "review.lua", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data, "ALISIO_URL="+hs.URL+"/v1")
	res := r.Results
	if rv, _ := res["edit_review"].(map[string]any); rv["kind"] != "edit" || rv["path"] != "main.go" || res["tabs"] != float64(2) {
		t.Errorf("the edit's review %v in %v tabs", res["edit_review"], res["tabs"])
	}
	if d := fmt.Sprint(res["diff"]); !strings.Contains(d, "diff:true lines:[package main]") || !strings.Contains(d, "diff:true lines:[package main // reviewed]") {
		t.Errorf("the diff: %s", d)
	}
	if lines(res["main_after_turn"]) != "package main // reviewed" || res["main_modified"] != false {
		t.Errorf("main.go's buffer after the turn: %q (modified %v)", lines(res["main_after_turn"]), res["main_modified"])
	}
	if res["new_exists"] != false || res["tabs_after_turn"] != float64(1) {
		t.Errorf("the rejected file exists: %v; tabs after the turn: %v", res["new_exists"], res["tabs_after_turn"])
	}
	var fresh struct {
		First, Now, Note string
		Messages         int
	}
	if raw, _ := json.Marshal(res["new_session"]); json.Unmarshal(raw, &fresh) != nil || fresh.Now == "" || fresh.Now == fresh.First || fresh.Messages != 0 ||
		!strings.Contains(fresh.Note, "started a new session (second try): the next prompt goes to it") {
		t.Errorf(":AlisioNew: %+v", fresh)
	}
	if chat := lines(res["chat_of_new_session"]); strings.Contains(chat, "the first session was compacted") {
		t.Errorf("the new session's chat shows the first session's notice:\n%s", chat)
	}
	// Once answered, nothing in the chat says that a change waits: not the call's line, nor the note.
	if chat := lines(res["chat_after_answers"]); strings.Contains(chat, "⏸ waits") || strings.Contains(chat, "ga accepts") || !strings.Contains(chat, "new.txt") {
		t.Errorf("after the answers the chat still says a change waits:\n%s", chat)
	}
	if chat := lines(res["chat_in_review"]); !strings.Contains(chat, "· running…\n  ⏸ waits for your review: ga accepts, gr rejects") {
		t.Errorf("the chat while the edit waits for its review:\n%s", chat)
	}
	if lines(res["main_after_undo"]) != "package main" {
		t.Errorf("main.go's buffer after :AlisioUndoTurn: %q", lines(res["main_after_undo"]))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "main.go")); string(b) != "package main\n" {
		t.Errorf("main.go on disk after the undo: %q", b)
	}
	if chat := lines(res["chat"]); !strings.Contains(chat, "    change to main.go:\n    -package main\n    +package main // reviewed") ||
		!strings.Contains(chat, "    new content of new.txt:\n      not wanted") || strings.Contains(chat, `"oldText"`) {
		t.Errorf("the calls in the chat:\n%s", chat)
	}
}

// TestNeovim_EditCheckpointAndUndo: :AlisioEditCheckpoint opens the checkpoint as a JSON buffer; :w of a bad
// one is refused (the buffer stays modified), of a good one stores it; :AlisioUndoCompact undoes the edit, then
// the compaction, then says there is nothing left.
func TestNeovim_EditCheckpointAndUndo(t *testing.T) {
	_, hs := buildAndHello(t)
	ws, data := workspace(t)
	r := nvim(t, "checkpoint_edit.lua", "ALISIO_URL="+hs.URL+"/v1", "ALISIO_WS="+ws, "XDG_DATA_HOME="+data)
	res := r.Results
	buf := lines(res["buffer"])
	if !strings.HasPrefix(buf, "{\n  \"goal\": ") || !strings.Contains(buf, "\n  \"relevantFiles\": ") || res["filetype"] != "json" ||
		res["buftype"] != "acwrite" || res["current_is_checkpoint"] != true {
		t.Errorf("the checkpoint buffer (%v, %v, current %v):\n%s", res["filetype"], res["buftype"], res["current_is_checkpoint"], buf)
	}
	if refusal := fmt.Sprint(res["refusal"]); !strings.Contains(refusal, "goal: got number, want string") || res["modified_after_refusal"] != true {
		t.Errorf("the refused save: %s (modified %v)", refusal, res["modified_after_refusal"])
	}
	if res["modified_after_save"] != false || !strings.Contains(lines(res["view"]), "## Goal\nEdited in Neovim") {
		t.Errorf("after the save (modified %v), :AlisioCheckpoint shows:\n%s", res["modified_after_save"], lines(res["view"]))
	}
	if copy, view := fmt.Sprint(res["copy"]), fmt.Sprint(res["view_after_copy"]); !strings.Contains(copy, `"goal": "Only in the copy"`) ||
		strings.Contains(view, "Only in the copy") || !strings.Contains(view, "Edited in Neovim") || res["modified_after_copy"] != true {
		t.Errorf(":w! {file} in the checkpoint buffer must write a copy only (modified after: %v); the copy:\n%s\nthe checkpoint in force:\n%s",
			res["modified_after_copy"], copy, view)
	}
	if stale := fmt.Sprint(res["stale_refusal"]); !strings.Contains(stale, "Nothing was saved, and your edit is kept: :w FILE keeps a copy of it, then :e! shows the one in force") ||
		res["modified_after_stale"] != true {
		t.Errorf("saving an edit begun before another save: %q (modified after: %v)", stale, res["modified_after_stale"])
	}
	if res["windows_on_edit_buffer"] != float64(1) || res["modified_after_reread"] != false {
		t.Errorf(":AlisioEditCheckpoint again: %v windows on the buffer; after :e! modified %v", res["windows_on_edit_buffer"], res["modified_after_reread"])
	}
	if undo := fmt.Sprint(res["undo_of_edits"]); !strings.Contains(undo, "saves in a row, with no message between them, are one edit") {
		t.Errorf("the undo of two saves does not say they were one edit: %s", undo)
	}
	// The boundary after an undo and a new compaction counts what that compaction replaced.
	var replaced, counted int
	if _, err := fmt.Sscanf(strings.TrimPrefix(fmt.Sprint(res["second_compaction"]), "Alisio: "), "compacted %d messages", &replaced); err != nil {
		t.Errorf("the second compaction's notice: %v (%v)", res["second_compaction"], err)
	}
	if _, err := fmt.Sscanf(fmt.Sprint(res["boundary"]), "── %d messages compacted", &counted); err != nil || counted != replaced {
		t.Errorf("after an undo the chat's boundary says %q, the compaction %q", res["boundary"], res["second_compaction"])
	}
	t.Logf("notes: %v", r.Notes)
}
