package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/storage/storagetest"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

var binary string

func TestMain(m *testing.M) {
	if file := os.Getenv(decodeChildEnv); file != "" {
		os.Exit(decodeChild(file)) // a child of BenchmarkImport
	}
	dir, err := os.MkdirTemp("", "alisio-cli")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "alisio-lsp")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cli runs the binary with a private data directory and returns stdout, stderr and the exit code.
func cli(t *testing.T, data string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--data-dir", data}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func mustCLI(t *testing.T, data string, args ...string) string {
	t.Helper()
	out, errOut, code := cli(t, data, "", args...)
	if code != 0 {
		t.Fatalf("alisio-lsp %v: exit %d: %s", args, code, errOut)
	}
	return out
}

func TestCLI_ImportShowExportRoundTrip(t *testing.T) {
	data := t.TempDir()
	corpus := transcripttest.Corpus(t)
	for _, file := range corpus {
		t.Run(file.Name, func(t *testing.T) {
			out := mustCLI(t, data, "--log-level", "debug", "sessions", "import", file.Path)
			id := strings.TrimSpace(out)
			if strings.Count(out, "\n") != 1 || len(id) != 36 {
				t.Fatalf("import must print only the session ID, got %q", out)
			}
			for _, f := range []string{"openai", "anthropic"} {
				exported := mustCLI(t, data, "sessions", "export", id, "--format", f)
				orig := file.Read(t)
				a, err := formats.Import(orig, formats.Auto)
				if err != nil {
					t.Fatal(err)
				}
				b, err := formats.Import([]byte(exported), formats.Format(f))
				if err != nil {
					t.Fatalf("the %s export does not import: %v", f, err)
				}
				if len(a.Messages) != len(b.Messages) {
					t.Fatalf("%s export has %d messages; want %d", f, len(b.Messages), len(a.Messages))
				}
				for i := range a.Messages {
					for j, c := range a.Messages[i].ToolCalls {
						if b.Messages[i].ToolCalls[j].ID != c.ID {
							t.Fatalf("call ID changed: %q → %q", c.ID, b.Messages[i].ToolCalls[j].ID)
						}
					}
					if a.Messages[i].ToolCallID != b.Messages[i].ToolCallID || a.Messages[i].Text != b.Messages[i].Text {
						t.Fatalf("%s export changed message %d", f, i)
					}
				}
			}
			show := mustCLI(t, data, "sessions", "show", id)
			if !strings.Contains(show, id) || !strings.Contains(show, "transcript") {
				t.Fatalf("show: %s", show)
			}
			if file.Pending == 1 && !strings.Contains(show, "uncertain  1 tool call without a result") {
				t.Fatalf("show does not report the uncertain call: %s", show)
			}
		})
	}
	list := mustCLI(t, data, "--json", "sessions", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != len(corpus) {
		t.Fatalf("list: %d lines", len(lines))
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil || v["v"] != float64(1) || v["type"] != "session" {
			t.Fatalf("JSON line %q", l)
		}
	}
	st, err := os.Stat(data)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("data directory mode %v", st.Mode().Perm())
	}
}

func TestCLI_ImportJSONAndStdin(t *testing.T) {
	data := t.TempDir()
	in := `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
	out, _, code := cli(t, data, in, "--json", "sessions", "import", "-")
	var v struct {
		V        int    `json:"v"`
		Session  string `json:"session"`
		Messages int    `json:"messages"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.V != 1 || v.Messages != 2 || v.Session == "" {
		t.Fatalf("import --json: %q", out)
	}
	// Two messages are too few to compact: said once (the event's line), exit 1.
	out, errOut, code := cli(t, data, "", "compact", v.Session)
	if code != 1 || strings.Count(out+errOut, "not enough history") != 1 || !strings.Contains(out, "compaction skipped: not enough history") {
		t.Fatalf("compact of two messages: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A transcript without messages makes an empty session, and says so.
	out, errOut, code = cli(t, data, `[{"role":"system","content":"be brief"}]`, "sessions", "import", "-")
	if code != 0 || strings.TrimSpace(out) == "" || !strings.Contains(errOut, "standard input holds no messages (besides instructions): the session starts empty") {
		t.Fatalf("an import without messages: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestCLI_MalformedImportsCreateNothing(t *testing.T) {
	data := t.TempDir()
	for _, tc := range []struct{ name, in, want string }{
		{"bad json", `{"messages":[{"role":"user",]}`, "line 1, column"},
		{"unknown role", `[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]`, `message 2: unknown role "wizard"`},
		{"orphan result", "{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"tool\",\"tool_call_id\":\"zz\",\"content\":\"r\"}\n", `line 2: tool result for call ID "zz"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := cli(t, data, tc.in, "sessions", "import", "-")
			if code == 0 || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing imported") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %q", code, out, errOut, tc.want)
			}
		})
	}
	if out := mustCLI(t, data, "--json", "sessions", "list"); out != "" {
		t.Fatalf("a refused import created sessions: %s", out)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "import", "--format", "xml", "-"); code == 0 || !strings.Contains(errOut, "auto, openai, anthropic") {
		t.Fatalf("bad --format: %s", errOut)
	}
}

// frame encodes one LSP message.
func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// TestCLI_DaemonLifecycleAndLock runs a private daemon (serve --no-shared) over stdio: it answers initialize,
// holds the store (a second process gets a clear lock error, never a hang), and exits 0 after shutdown and
// exit.
func TestCLI_DaemonLifecycleAndLock(t *testing.T) {
	data := t.TempDir()
	daemon := exec.Command(binary, "--data-dir", data, "serve", "--no-shared")
	stdin, _ := daemon.StdinPipe()
	stdout, _ := daemon.StdoutPipe()
	var daemonErr bytes.Buffer
	daemon.Stderr = &daemonErr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stdout)
	readMsg := func() string {
		t.Helper()
		n := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading from the daemon: %v (%s)", err, daemonErr.String())
			}
			if strings.TrimSpace(line) == "" {
				break
			}
			fmt.Sscanf(line, "Content-Length: %d", &n)
		}
		body := make([]byte, n)
		_, _ = io.ReadFull(r, body)
		return string(body)
	}
	_, _ = io.WriteString(stdin, frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":1,"rootUri":"file://`+t.TempDir()+`","capabilities":{}}}`))
	if resp := readMsg(); !strings.Contains(resp, `"alisio"`) {
		t.Fatalf("initialize: %s", resp)
	}
	start := time.Now()
	_, errOut, code := cli(t, data, "", "sessions", "list")
	if code == 0 || time.Since(start) > 20*time.Second {
		t.Fatalf("second process: exit %d after %v", code, time.Since(start))
	}
	for _, want := range []string{"locked", filepath.Join(data, "sessions"), "process", "--data-dir"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("lock error %q does not mention %q", errOut, want)
		}
	}
	_, _ = io.WriteString(stdin, frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`))
	if resp := readMsg(); !strings.Contains(resp, `"id":2`) {
		t.Fatalf("shutdown: %s", resp)
	}
	_, _ = io.WriteString(stdin, frame(`{"jsonrpc":"2.0","method":"exit"}`))
	done := make(chan error, 1)
	go func() { done <- daemon.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon exit: %v (%s)", err, daemonErr.String())
		}
	case <-time.After(10 * time.Second):
		_ = daemon.Process.Kill()
		t.Fatal("the daemon did not exit")
	}
	if strings.Contains(daemonErr.String(), "panic") {
		t.Fatalf("daemon log: %s", daemonErr.String())
	}
	mustCLI(t, data, "sessions", "list")
}

// TestCLI_ContextCountsTheAgentsInstructions: `context` counts what the daemon sends (the agent's instructions
// and the session's, the tool catalog), and `sessions show` gives the same size, in JSON and in words.
func TestCLI_ContextCountsTheAgentsInstructions(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join(t.TempDir(), "s.json")
	doc := `[{"role":"system","content":"be brief"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(mustCLI(t, data, "sessions", "import", file))
	type size struct{ InstructionsChars, TranscriptChars, ToolsChars, EstimatedTokens int }
	var status size
	lines := strings.Split(strings.TrimSpace(mustCLI(t, data, "--json", "context", id)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &status); err != nil {
		t.Fatal(err)
	}
	if want := utf8.RuneCountInString(agent.DefaultInstructions + "\n\nbe brief"); status.InstructionsChars != want {
		t.Fatalf("context counts %d chars of instructions, want %d (the agent's and the session's)", status.InstructionsChars, want)
	}
	if status.ToolsChars == 0 || status.TranscriptChars != len("hi")+len("hello") {
		t.Fatalf("context: %+v", status)
	}
	var shown size
	lines = strings.Split(strings.TrimSpace(mustCLI(t, data, "--json", "sessions", "show", id)), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &shown); err != nil {
		t.Fatal(err)
	}
	if shown != status {
		t.Fatalf("sessions show counts %+v, context %+v", shown, status)
	}
	sizeOf := func(out string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "size ") {
				return strings.TrimSpace(strings.TrimPrefix(l, "size "))
			}
		}
		t.Fatalf("no size line in\n%s", out)
		return ""
	}
	words := mustCLI(t, data, "context", id)
	if show, ctx := sizeOf(mustCLI(t, data, "sessions", "show", id)), sizeOf(words); show != ctx {
		t.Fatalf("sessions show says %q, context says %q", show, ctx)
	}
	// With no window known, the tokens' limit says what it is made of (the catalog is why it is not the window's).
	if !strings.Contains(words, "window      not known") || !strings.Contains(words, "the limit is limits.maxContextChars's") {
		t.Fatalf("the tokens line does not say what its limit is:\n%s", words)
	}
}

func TestCLI_ContextApplyAndCompact(t *testing.T) {
	data := t.TempDir()
	gen := mustCLI(t, data, "sessions", "generate", "--messages", "800")
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(gen), 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(mustCLI(t, data, "sessions", "import", file))
	before := mustCLI(t, data, "sessions", "export", id)

	out := mustCLI(t, data, "--json", "context", id, "--max-context-chars", "60000", "--keep-turns", "3", "--apply")
	types := jsonTypes(t, out)
	if !strings.Contains(types, "compaction_started,compaction_completed") || !strings.HasSuffix(types, "status") {
		t.Fatalf("events %s", types)
	}
	var status map[string]any
	lines := strings.Split(strings.TrimSpace(out), "\n")
	_ = json.Unmarshal([]byte(lines[len(lines)-1]), &status)
	if status["usedChars"].(float64) > 60000 {
		t.Fatalf("H1: %v chars after --apply", status["usedChars"])
	}
	after := mustCLI(t, data, "sessions", "export", id)
	a, _ := formats.Import([]byte(before), formats.OpenAI)
	b, err := formats.Import([]byte(after), formats.OpenAI)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(b.Messages); err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) >= len(a.Messages) {
		t.Fatal("nothing compacted")
	}
	all := mustCLI(t, data, "sessions", "export", id, "--all")
	if strings.Count(all, `"compacted":true`) == 0 || strings.Count(all, `"summary":true`) != 1 {
		t.Fatal("--all does not show the compacted originals and the checkpoint")
	}
	// Imported again, the audit export says what becomes of its compacted messages.
	if _, errOut, code := cli(t, data, all, "sessions", "import", "-"); code != 0 || !strings.Contains(errOut, "are marked compacted (an export --all): imported as ordinary messages") {
		t.Fatalf("importing an export --all: %d %s", code, errOut)
	}

	out = mustCLI(t, data, "compact", id, "--focus", "storage")
	if !strings.Contains(out, "✔ compacted") && !strings.Contains(out, "compaction skipped") {
		t.Fatalf("compact: %s", out)
	}
	if _, errOut, code := cli(t, data, "", "context", id, "--keep-turns", "30"); code == 0 || !strings.Contains(errOut, "compaction.keepTurns: 30 (allowed: 0–20)") {
		t.Fatalf("bad flag: %s", errOut)
	}
}

// TestCLI_WindowFromTheProvider: context and compact read the window from the provider's model list as the
// daemon and prompt do (they used to assume 200k tokens, and compact sent a summarizer request of
// max_tokens 16000 to a 16k-token model).
func TestCLI_WindowFromTheProvider(t *testing.T) {
	srv := providertest.New(providertest.Script{Models: []map[string]any{{"id": "alisio-test", "object": "model", "context_length": 16000}}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data := t.TempDir()
	cfg := configFor(t, hs.URL)
	gen := mustCLI(t, data, "sessions", "generate", "--messages", "200")
	id := strings.TrimSpace(func() string { o, _, _ := cli(t, data, gen, "sessions", "import", "-"); return o }())
	out := mustCLI(t, data, "--config", cfg, "context", id)
	if !strings.Contains(out, "window      16,000 tokens (read from the provider's model list)") || strings.Contains(out, "next call   sends as is") {
		t.Fatalf("context: %s", out)
	}
	mustCLI(t, data, "--config", cfg, "compact", id)
	for _, req := range srv.Requests() {
		if max, _ := req["max_tokens"].(float64); max > 16000/4 {
			t.Fatalf("a summarizer request asked for %v output tokens of a 16000-token window", max)
		}
	}
	if len(srv.Requests()) == 0 {
		t.Fatal("compact sent no summarizer request")
	}
}

// TestCLI_UnreachableProviderIsOneLine: a wrong provider.baseURL gives one line that names the URL and the
// setting (it used to print a JSON log line, then "connection refused" without either), then the command
// that resumes the turn.
func TestCLI_UnreachableProviderIsOneLine(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	cfg := configFor(t, "http://127.0.0.1:1")
	_, errOut, code := cli(t, data, "", "--config", cfg, "prompt", "--workspace", ws, "hi there")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	resume := fmt.Sprintf("to resume the turn: alisio-lsp --data-dir %s --config %s prompt --session %s 'hi there'", data, cfg, strings.TrimPrefix(lines[0], "session "))
	if code == 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "session ") || strings.Contains(errOut, `{"level"`) ||
		lines[2] != resume || !strings.Contains(errOut, "could not reach the provider at http://127.0.0.1:1/v1/") || !strings.Contains(errOut, "check provider.baseURL") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
	// The command runs as printed (the store and the configuration are named): the same session, the same
	// provider still unreachable.
	again := exec.Command("sh", "-c", strings.Replace(strings.TrimPrefix(resume, "to resume the turn: "), "alisio-lsp", binary, 1))
	out, _ := again.CombinedOutput()
	if !strings.Contains(string(out), lines[0]) || !strings.Contains(string(out), "could not reach the provider") {
		t.Fatalf("the printed command, run: %s", out)
	}
}

// TestCLI_NewcomerMistakes: each common slip gets an answer that says what to do.
func TestCLI_NewcomerMistakes(t *testing.T) {
	data := t.TempDir()
	if out, _, code := cli(t, data, "", "--json", "bogus"); code == 0 || !strings.Contains(out, `"type":"error"`) || !strings.Contains(out, `unknown command \"bogus\"`) {
		t.Fatalf("--json with an unknown command: %q", out)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "show"); code == 0 || !strings.Contains(errOut, "missing SESSION: usage: alisio-lsp sessions show SESSION") {
		t.Fatalf("sessions show without a session: %s", errOut)
	}
	if _, errOut, code := cli(t, data, "", "compact", ""); code == 0 || !strings.Contains(errOut, "the session ID is empty: give one (alisio-lsp sessions list shows them") {
		t.Fatalf("compact of an empty ID: %s", errOut)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "generate", "--messages", "-5"); code == 0 || !strings.Contains(errOut, "--messages -5") {
		t.Fatalf("generate --messages -5: %s", errOut)
	}
	id := strings.TrimSpace(mustCLIIn(t, data, `[{"role":"user","content":"fix the parser bug"},{"role":"assistant","content":"ok"}]`, "sessions", "import", "-"))
	if out := mustCLI(t, data, "sessions", "list"); !strings.Contains(out, id) || !strings.Contains(out, "fix the parser bug") {
		t.Fatalf("a session imported from stdin is titled after its first prompt: %s", out)
	}
	if out := mustCLI(t, data, "sessions", "list", "--workspace", "/no/such/ws"); !strings.Contains(out, "no sessions for the workspace /no/such/ws") {
		t.Fatalf("an empty filtered list: %s", out)
	}
}

// TestCLI_SessionByPrefix: a session can be named by the start of its ID; one shared by several sessions is
// refused with their IDs, and an unknown one says how to list them.
func TestCLI_SessionByPrefix(t *testing.T) {
	data := t.TempDir()
	in := `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
	first := strings.TrimSpace(mustCLIIn(t, data, in, "sessions", "import", "-"))
	second := strings.TrimSpace(mustCLIIn(t, data, in, "sessions", "import", "-"))
	common := 0
	for common < len(first) && first[common] == second[common] {
		common++
	}
	if out := mustCLI(t, data, "sessions", "show", first[:common+1]); !strings.Contains(out, "session    "+first) {
		t.Fatalf("show by prefix: %s", out)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "show", first[:common]); code == 0 || !strings.Contains(errOut, "2 sessions start with") {
		t.Fatalf("an ambiguous prefix: %s", errOut)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "show", "zz"); code == 0 || !strings.Contains(errOut, "sessions list shows the sessions") {
		t.Fatalf("an unknown session: %s", errOut)
	}
	if out := mustCLI(t, data, "sessions", "delete", second[:common+1]); !strings.Contains(out, "deleted "+second) {
		t.Fatalf("delete by prefix: %s", out)
	}
}

func mustCLIIn(t *testing.T, data, stdin string, args ...string) string {
	t.Helper()
	out, errOut, code := cli(t, data, stdin, args...)
	if code != 0 {
		t.Fatalf("alisio-lsp %v: exit %d: %s", args, code, errOut)
	}
	return out
}

// TestCLI_TryScriptWorksAnywhere: the README's try-it-yourself script runs its tools without error in any
// workspace (the demo's script only fits the demo's own).
func TestCLI_TryScriptWorksAnywhere(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "try", "script.json"))
	if err != nil {
		t.Fatal(err)
	}
	var script providertest.Script
	if err := json.Unmarshal(raw, &script); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(providertest.New(script))
	defer hs.Close()
	data, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("TODO: try alisio\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := configFor(t, hs.URL)
	out := mustCLI(t, data, "--json", "--config", cfg, "prompt", "--workspace", ws, "look around")
	if strings.Contains(out, `"isError":true`) || strings.Count(out, `"isError":false`) != 2 || !strings.Contains(out, "turn_completed") {
		t.Fatalf("%s", out)
	}
	// The assistant's words before its tool calls are a line of their own, before the calls.
	if at := strings.Index(out, `"text":"(scripted test model) Let me look around`); at < 0 || at > strings.Index(out, `"type":"tool_call"`) {
		t.Fatalf("no text line before the tool calls:\n%s", out)
	}
	// The script loops: a second prompt gets the same tools and answer, in the same session (the workspace's
	// latest goes on); --new starts another.
	again := mustCLI(t, data, "--json", "--config", cfg, "prompt", "--workspace", ws, "and again")
	if strings.Count(again, `"isError":false`) != 2 {
		t.Fatalf("second prompt: %s", again)
	}
	var session, second, third struct {
		ID        string
		Continued bool
	}
	_ = json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &session)
	_ = json.Unmarshal([]byte(strings.SplitN(again, "\n", 2)[0]), &second)
	if second.ID != session.ID || !second.Continued || session.Continued {
		t.Fatalf("the second prompt's session %+v; the first's %+v", second, session)
	}
	_ = json.Unmarshal([]byte(strings.SplitN(mustCLI(t, data, "--json", "--config", cfg, "prompt", "--workspace", ws, "--new", "fresh"), "\n", 2)[0]), &third)
	if third.ID == session.ID || third.ID == "" || third.Continued {
		t.Fatalf("--new: %+v", third)
	}
	if export := mustCLI(t, data, "sessions", "export", session.ID); !strings.Contains(export, "notes.txt:1: TODO: try alisio") {
		t.Fatalf("the search result is not in the session: %s", export)
	}
}

func TestCLI_F1ErrorIsActionable(t *testing.T) {
	data := t.TempDir()
	huge := strings.Repeat("x", 20000)
	in := `[{"role":"system","content":"` + huge + `"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
	id := strings.TrimSpace(func() string { o, _, _ := cli(t, data, in, "sessions", "import", "-"); return o }())
	_, errOut, code := cli(t, data, "", "context", id, "--max-context-chars", "10000", "--apply")
	// The imported system prompt, the agent's own instructions before it, and the two messages.
	chars := 20000 + utf8.RuneCountInString(agent.DefaultInstructions+"\n\n") + len("hi") + len("hello")
	if code == 0 || !strings.Contains(errOut, fmt.Sprintf("Context budget exceeded (approximately %d characters of conversation; limit 10000). Automatic compaction was skipped because there is no safe boundary to summarize.", chars)) ||
		!strings.Contains(errOut, "start a new session") {
		t.Fatalf("F1: %s", errOut)
	}
	// In the shell's words, not the editors'; with --json, its kind and figures for a program.
	if !strings.Contains(errOut, "alisio-lsp compact SESSION") || strings.Contains(errOut, ":AlisioCompact") {
		t.Fatalf("F1 on the command line names the editors' commands: %s", errOut)
	}
	out, _, _ := cli(t, data, "", "--json", "context", id, "--max-context-chars", "10000", "--apply")
	var line struct {
		Type string
		Data api.ErrorData
	}
	lines := strings.Split(strings.TrimSpace(out), "\n") // the events, the status, then the error
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &line); err != nil || line.Type != "error" || line.Data.Kind != api.KindContextBudget ||
		line.Data.Chars != chars || line.Data.Limit != 10000 {
		t.Fatalf("--json F1: %q (%v)", out, err)
	}
}

func TestCLI_ConfigFileErrors(t *testing.T) {
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "alisio.json")
	_ = os.WriteFile(cfg, []byte(`{"compaction":{"threshold":2}}`), 0o600)
	if _, errOut, code := cli(t, data, "", "--config", cfg, "sessions", "list"); code == 0 || !strings.Contains(errOut, "compaction.threshold: 2 (allowed: 0.1–0.99)") {
		t.Fatalf("config error: %s", errOut)
	}
	if out := mustCLI(t, data, "version"); !strings.HasPrefix(out, "alisio-lsp ") {
		t.Fatalf("version: %s", out)
	}
}

func jsonTypes(t *testing.T, out string) string {
	var types []string
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v map[string]any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil || v["v"] != float64(1) {
			t.Fatalf("not a versioned JSON line: %q", sc.Text())
		}
		types = append(types, v["type"].(string))
	}
	return strings.Join(types, ",")
}

// providerConfig serves script with the local test provider and writes a config file pointing at it.
func providerConfig(t *testing.T, script providertest.Script) string {
	t.Helper()
	hs := httptest.NewServer(providertest.New(script))
	t.Cleanup(hs.Close)
	return configFor(t, hs.URL)
}

// TestCLI_KilledDuringAToolCall kills alisio-lsp with SIGKILL while a tool runs. After the restart the call is
// uncertain: never retried, compaction and prompts are refused with directions, recovery records the unknown
// outcome, and the session continues (U1, U2, G3).
func TestCLI_KilledDuringAToolCall(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	marker := filepath.Join(ws, "ran")
	cfg := providerConfig(t, providertest.Script{Replies: []providertest.Reply{
		{Text: "Deploying.", ToolCalls: []providertest.ToolCall{{ID: "call_deploy", Name: "run_command", Arguments: `{"command":"echo x >> ran; sleep 5"}`}}},
		{Text: "I will verify the deploy first."},
	}})
	cmd := exec.Command(binary, "--data-dir", data, "--config", cfg, "--json", "prompt", "--workspace", ws, "deploy it")
	out, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	session := ""
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var ev map[string]any
		_ = json.Unmarshal(sc.Bytes(), &ev)
		if ev["type"] == "session" {
			session, _ = ev["id"].(string)
		}
		if ev["type"] == "tool_call" {
			break // the call is journaled and running
		}
	}
	for i := 0; i < 250; i++ { // wait until the command has started
		if _, err := os.Stat(marker); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if session == "" {
		t.Fatalf("no session reported: %s", stderr.String())
	}

	show := mustCLI(t, data, "sessions", "show", session)
	if !strings.Contains(show, "call_deploy") || !strings.Contains(show, "uncertain") {
		t.Fatalf("after the kill the call is not uncertain: %s", show)
	}
	if _, errOut, code := cli(t, data, "", "compact", session); code == 0 || !strings.Contains(errOut, "call_deploy") || !strings.Contains(errOut, "recover") {
		t.Fatalf("compaction of an uncertain session: %s", errOut)
	}
	if _, errOut, code := cli(t, data, "", "--config", cfg, "prompt", "--session", session, "go on"); code == 0 || !strings.Contains(errOut, "sessions recover "+session+" --acknowledge") {
		t.Fatalf("prompt on an uncertain session: %s", errOut)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "recover", session); code == 0 || !strings.Contains(errOut, "call_deploy") || !strings.Contains(errOut, "--acknowledge") {
		t.Fatalf("recover without --acknowledge: %s", errOut)
	}
	mustCLI(t, data, "sessions", "recover", session, "--acknowledge")
	// Once recovered, --json still answers in JSON: no calls left.
	if again := mustCLI(t, data, "--json", "sessions", "recover", session, "--acknowledge"); !strings.Contains(again, `"type":"recovered"`) || !strings.Contains(again, `"calls":0`) {
		t.Fatalf("--json recover of a session without uncertain calls: %q", again)
	}
	out2 := mustCLI(t, data, "--config", cfg, "prompt", "--session", session, "go on")
	if !strings.Contains(out2, "verify the deploy") {
		t.Fatalf("the session did not continue: %s", out2)
	}
	raw, _ := os.ReadFile(marker)
	if strings.Count(string(raw), "x") > 1 {
		t.Fatalf("the uncertain call was retried: %q", raw)
	}
}

// TestCLI_SecretsNeverReachLogs runs a turn with debug logs and an API key in the environment: the key goes
// to the provider and nowhere else.
func TestCLI_SecretsNeverReachLogs(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	const secret = "sk-alisio-test-6f1c0b7e9a"
	t.Setenv("ALISIO_TEST_API_KEY", secret)
	cfg := providerConfig(t, providertest.Script{Replies: []providertest.Reply{{Text: "hi"}}})
	raw, _ := os.ReadFile(cfg)
	var c map[string]map[string]any
	_ = json.Unmarshal(raw, &c)
	c["provider"]["apiKeyEnv"] = "ALISIO_TEST_API_KEY"
	raw, _ = json.Marshal(c)
	_ = os.WriteFile(cfg, raw, 0o600)
	logFile := filepath.Join(t.TempDir(), "alisio.log")
	out, errOut, code := cli(t, data, "", "--config", cfg, "--log-level", "debug", "--log-file", logFile, "prompt", "--workspace", ws, "hello")
	if code != 0 {
		t.Fatalf("prompt: %s", errOut)
	}
	logs, _ := os.ReadFile(logFile)
	for name, text := range map[string]string{"stdout": out, "stderr": errOut, "log file": string(logs)} {
		if strings.Contains(text, secret) {
			t.Fatalf("the API key appears in %s", name)
		}
	}
	all := mustCLI(t, data, "sessions", "export", strings.TrimSpace(strings.TrimPrefix(errOut, "session ")), "--all")
	if strings.Contains(all, secret) {
		t.Fatal("the API key was stored")
	}
	_ = filepath.WalkDir(data, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
				t.Errorf("the API key is in the store file %s", path)
			}
		}
		return nil
	})
}

// TestCLI_AKeyPastedAsItsVariableIsNeverRepeated: an API key written in provider.apiKeyEnv, where the name of
// its variable belongs, is refused with what to do, and repeated nowhere: not in the error, not in the log.
func TestCLI_AKeyPastedAsItsVariableIsNeverRepeated(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	const secret = "sk-proj-alisio7f3e9c1d0b2a"
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"provider":{"kind":"openai","model":"m","apiKeyEnv":"`+secret+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "alisio.log")
	out, errOut, code := cli(t, data, "", "--config", cfg, "--log-level", "debug", "--log-file", logFile, "prompt", "--workspace", ws, "hello")
	if code == 0 || !strings.Contains(errOut, "provider.apiKeyEnv") || !strings.Contains(errOut, "OPENAI_API_KEY") {
		t.Fatalf("a key in provider.apiKeyEnv: exit %d, %s", code, errOut)
	}
	logs, _ := os.ReadFile(logFile)
	for name, text := range map[string]string{"stdout": out, "stderr": errOut, "log file": string(logs)} {
		if strings.Contains(text, "alisio7f3e9c1d0b2a") {
			t.Fatalf("the key appears in %s: %s", name, text)
		}
	}
}

// TestCLI_JSONErrors: with --json a failure is a JSON line too, so that a program reading the output can
// tell it from a result; the exit code is 1.
func TestCLI_JSONErrors(t *testing.T) {
	out, errOut, code := cli(t, t.TempDir(), "", "--json", "sessions", "show", "no-such-session")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &line); err != nil || line["v"] != float64(1) || line["type"] != "error" ||
		!strings.Contains(fmt.Sprint(line["error"]), "no-such-session") {
		t.Fatalf("stdout %q (stderr %q): want one JSON error line", out, errOut)
	}
	if _, errOut, _ := cli(t, t.TempDir(), "", "sessions", "show", "no-such-session"); !strings.HasPrefix(errOut, "alisio-lsp: ") {
		t.Fatalf("without --json the error is text on stderr: %q", errOut)
	}
}

// TestCLI_DiskFull: every command on a data directory whose disk is (nearly) full answers with one clear
// line and exit 1, never a Badger crash (it was SIGBUS with a 400-line dump, even for sessions list).
func TestCLI_DiskFull(t *testing.T) {
	disk := storagetest.SmallDisk(t, "160m")
	data := filepath.Join(disk, "data")
	mustCLI(t, data, "sessions", "list")
	storagetest.Fill(t, disk, 200<<10)
	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "import", "../../testdata/transcripts/openai-chat-array.json"}} {
		out, errOut, code := cli(t, data, "", args...)
		if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "free some disk space") || out != "" {
			t.Fatalf("%v on a full disk: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestCLI_Tools lists the catalog per source and says what confines run_command.
func TestCLI_Tools(t *testing.T) {
	out := mustCLI(t, t.TempDir(), "--json", "tools", "--workspace", t.TempDir())
	var line struct {
		V       int
		Type    string
		Sources []struct {
			Source       string
			Count, Chars int
		}
		CatalogChars int
		Confinement  string
	}
	if err := json.Unmarshal([]byte(out), &line); err != nil || line.Type != "tools" || len(line.Sources) != 1 || line.Sources[0].Count != 7 ||
		line.CatalogChars != line.Sources[0].Chars || !strings.Contains(line.Confinement, "run_command") {
		t.Fatalf("tools: %v %s", err, out)
	}
	// Without --json: each tool on its line, with what it does.
	human := mustCLI(t, t.TempDir(), "tools", "--workspace", t.TempDir())
	if !strings.Contains(human, "built-in: 7 tools") || !regexp.MustCompile(`(?m)^  recall +\S.{20,}$`).MatchString(human) {
		t.Fatalf("tools:\n%s", human)
	}
}

// TestCLI_Memories lists and deletes what the memory plugin saved for a workspace.
func TestCLI_Memories(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	st, err := storage.OpenDataDir(data, storage.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	added, err := st.AddMemories(ws, "s1", []string{"Use tabs.", "Tests run with make test."})
	if err != nil || st.Close() != nil {
		t.Fatal(err)
	}
	out := mustCLI(t, data, "memories", "list", "--workspace", ws)
	if !strings.Contains(out, "Use tabs.") || !strings.Contains(out, added[1].ID) {
		t.Fatalf("list: %s", out)
	}
	mustCLI(t, data, "memories", "delete", added[0].ID, "--workspace", ws)
	out = mustCLI(t, data, "--json", "memories", "list", "--workspace", ws)
	if strings.Count(out, "\n") != 1 || strings.Contains(out, "Use tabs.") || !strings.Contains(out, `"type":"memory"`) {
		t.Fatalf("after delete: %s", out)
	}
	if _, errOut, code := cli(t, data, "", "memories", "delete", "nope", "--workspace", ws); code != 1 || !strings.Contains(errOut, "no memory") {
		t.Fatalf("deleting an unknown memory: %d %s", code, errOut)
	}
	// More than memory.maxChars (4000) holds: all are listed, and the list says how many a request sends.
	var many []string
	for i := range 80 {
		many = append(many, fmt.Sprintf("Convention %02d: the handlers of package api return typed errors.", i))
	}
	if st, err = storage.OpenDataDir(data, storage.DefaultOptions("")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMemories(ws, "s1", many); err != nil || st.Close() != nil {
		t.Fatal(err)
	}
	out = mustCLI(t, data, "memories", "list", "--workspace", ws)
	if !strings.Contains(out, "Convention 00") || !regexp.MustCompile(`send the newest \d+ of these 81 \(memory.maxChars 4000\)`).MatchString(out) {
		t.Fatalf("a long list: %s", out)
	}
}

// openAITurns writes an OpenAI transcript with one turn per entry of turns ({calls, size}): that many read_file
// calls, each answered with size chars, then a closing answer.
func openAITurns(t *testing.T, turns ...[2]int) string {
	t.Helper()
	var msgs []map[string]any
	for turn, spec := range turns {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("turn %d: do the work", turn)})
		for i := 0; i < spec[0]; i++ {
			id := fmt.Sprintf("call_%d_%d", turn, i)
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": id, "type": "function",
				"function": map[string]any{"name": "read_file", "arguments": fmt.Sprintf(`{"path":"f%d_%d.go"}`, turn, i)}}}},
				map[string]any{"role": "tool", "tool_call_id": id, "content": strings.Repeat("0123456789", spec[1]/10)})
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": fmt.Sprintf("done with turn %d", turn)})
	}
	raw, _ := json.Marshal(msgs)
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// lastStatus is the status line --json context prints last.
func lastStatus(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var status map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &status); err != nil || status["type"] != "status" {
		t.Fatalf("no status line: %q", lines[len(lines)-1])
	}
	return status
}

// TestCLI_SmallBudgetWithoutAWindowCompacts: with a provider that declares no window, a small
// limits.maxContextChars (down to 4000) stands in for the window (A2) but must not leave the summarizer too
// little room: compaction completes and the transcript fits, instead of failing on every call.
func TestCLI_SmallBudgetWithoutAWindowCompacts(t *testing.T) {
	cfg := providerConfig(t, providertest.Script{})
	for _, limit := range []int{12000, 4000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			data := t.TempDir()
			file := openAITurns(t, [2]int{3, 800}, [2]int{3, 800}, [2]int{3, 800}, [2]int{3, 800}, [2]int{3, 800})
			id := strings.TrimSpace(mustCLI(t, data, "sessions", "import", file))
			out := mustCLI(t, data, "--config", cfg, "--json", "context", id, "--max-context-chars", fmt.Sprint(limit), "--apply")
			if types := jsonTypes(t, out); !strings.Contains(types, "compaction_completed") || strings.Contains(types, "compaction_failed") {
				t.Fatalf("events %s\n%s", types, out)
			}
			if used := lastStatus(t, out)["usedChars"].(float64); used > float64(limit) {
				t.Fatalf("H1: %v chars after --apply, limit %d", used, limit)
			}
		})
	}
}

// TestCLI_LongLastTurnFitsWithoutF1: turns of 10 × 3000, 10 × 3000 and 60 × 2000 chars under a 20000-char
// limit. The last turn cannot fit even reduced, so L1's budget compaction cuts inside it at its last safe
// boundary (G2) and --apply succeeds at once, with no F1.
func TestCLI_LongLastTurnFitsWithoutF1(t *testing.T) {
	cfg := providerConfig(t, providertest.Script{})
	data := t.TempDir()
	id := strings.TrimSpace(mustCLI(t, data, "sessions", "import", openAITurns(t, [2]int{10, 3000}, [2]int{10, 3000}, [2]int{60, 2000})))
	out, errOut, code := cli(t, data, "", "--config", cfg, "--json", "context", id, "--max-context-chars", "20000", "--apply")
	if code != 0 || strings.Contains(errOut, "Context budget exceeded") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if used := lastStatus(t, out)["usedChars"].(float64); used > 20000 {
		t.Fatalf("H1: %v chars after --apply", used)
	}
	if !strings.Contains(out, `"reason":"budget"`) {
		t.Fatalf("no budget compaction: %s", jsonTypes(t, out))
	}
}

// TestCLI_ShowPages: `sessions show` prints the last 200 messages and says which; --offset/--limit choose
// another window, and --limit 0 prints every message of a session longer than one read (showChunk).
func TestCLI_ShowPages(t *testing.T) {
	data := t.TempDir()
	gen := mustCLI(t, data, "sessions", "generate", "--messages", "2500")
	id := strings.TrimSpace(func() string { o, _, _ := cli(t, data, gen, "sessions", "import", "-"); return o }())
	rows := func(out string) []string {
		var r []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] != "" && strings.Trim(f[0], "0123456789") == "" {
				r = append(r, f[0])
			}
		}
		return r
	}
	out := mustCLI(t, data, "sessions", "show", id)
	var n int
	if _, err := fmt.Sscanf(out[strings.Index(out, "transcript "):], "transcript %d messages", &n); err != nil || n < 2500 {
		t.Fatalf("no message count (%v): %s", err, out)
	}
	if r := rows(out); len(r) != 200 || r[0] != strconv.Itoa(n-200) || r[199] != strconv.Itoa(n-1) ||
		!strings.Contains(out, fmt.Sprintf("showing    200 of %d messages, %d–%d (numbered from 0;", n, n-200, n-1)) {
		t.Fatalf("default show: %d rows from %v\n%s", len(r), r[:min(len(r), 1)], out[:min(len(out), 600)])
	}
	if r := rows(mustCLI(t, data, "sessions", "show", "--offset", "0", "--limit", "50", id)); len(r) != 50 || r[0] != "0" {
		t.Fatalf("--offset 0 --limit 50: %d rows", len(r))
	}
	every := mustCLI(t, data, "sessions", "show", "--limit", "0", id)
	if r := rows(every); len(r) != n || r[1234] != "1234" || strings.Contains(every, "showing") {
		t.Fatalf("--limit 0: %d rows", len(r))
	}
	lines := strings.Split(strings.TrimSpace(mustCLI(t, data, "--json", "sessions", "show", "--offset", strconv.Itoa(n-10), id)), "\n")
	if len(lines) != 11 || !strings.Contains(lines[0], fmt.Sprintf(`"total":%d`, n)) || !strings.Contains(lines[10], fmt.Sprintf(`"index":%d`, n-1)) {
		t.Fatalf("--json --offset n-10: %d lines, %s", len(lines), lines[0])
	}
	if _, errOut, code := cli(t, data, "", "sessions", "show", "--limit", "-1", id); code == 0 || !strings.Contains(errOut, "--limit -1: give how many messages to show, or 0 for every one") {
		t.Fatalf("--limit -1: %s", errOut)
	}
	// More than one read's worth from the end, a limit too large to add to, and an offset past the end.
	if r := rows(mustCLI(t, data, "sessions", "show", "--limit", "2000", id)); len(r) != 2000 || r[0] != strconv.Itoa(n-2000) {
		t.Fatalf("--limit 2000: %d rows", len(r))
	}
	if r := rows(mustCLI(t, data, "sessions", "show", "--limit", "9223372036854775807", id)); len(r) != n {
		t.Fatalf("--limit max int: %d rows", len(r))
	}
	if out := mustCLI(t, data, "sessions", "show", "--offset", strconv.Itoa(n), id); !strings.Contains(out, fmt.Sprintf("showing    no messages: --offset %d is past the last one (%d messages, numbered from 0)", n, n)) {
		t.Fatalf("--offset past the end: %s", out)
	}
}

// TestCLI_ImportStreamsAndIsAtomic: a transcript with a refused record after thousands of good ones leaves no
// session and names the record; the same transcript without it imports whole and keeps every invariant.
func TestCLI_ImportStreamsAndIsAtomic(t *testing.T) {
	data := t.TempDir()
	good := mustCLI(t, data, "sessions", "generate", "--messages", "6000")
	want, err := formats.Import([]byte(good), formats.Auto)
	if err != nil {
		t.Fatal(err)
	}
	// A tool result far into the file answers a call nobody made.
	at := strings.Index(good[len(good)/2:], `"tool_call_id":"`) + len(good)/2 + len(`"tool_call_id":"`)
	bad := good[:at] + "nobody-" + good[at:]
	file := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, data, "", "sessions", "import", file)
	if code == 0 || out != "" || !strings.Contains(errOut, "nothing imported: message ") || !strings.Contains(errOut, `call ID "nobody-`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out := mustCLI(t, data, "sessions", "list"); !strings.HasPrefix(out, "no sessions") {
		t.Fatalf("a refused import left a session: %s", out)
	}
	id := strings.TrimSpace(mustCLIIn(t, data, good, "sessions", "import", "-"))
	st, err := storage.OpenDataDir(data, storage.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := st.Transcript(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Messages) != len(want.Messages) || len(v.Session.Instructions) != 1 || !strings.HasPrefix(v.Session.Title, "Turn 0") {
		t.Fatalf("%d messages (want %d), record %+v", len(v.Messages), len(want.Messages), v.Session)
	}
	if err := transcripttest.CheckStructure(v.Messages); err != nil {
		t.Fatal(err)
	}
}

// TestCLI_UndoAndEditCheckpoint: checkpoint prints the editable document, --set replaces it (a bad one refused
// with every problem named, nothing saved), compact --undo undoes the edit and then the compaction, exactly
// (the export before and after match), and says when there is nothing left.
func TestCLI_UndoAndEditCheckpoint(t *testing.T) {
	data := t.TempDir()
	gen := mustCLI(t, data, "sessions", "generate", "--messages", "300")
	id := strings.TrimSpace(func() string { o, _, _ := cli(t, data, gen, "sessions", "import", "-"); return o }())
	before := mustCLI(t, data, "sessions", "export", id)
	if _, errOut, code := cli(t, data, "", "checkpoint", id); code == 0 || !strings.Contains(errOut, "the session has no checkpoint: it has not been compacted") ||
		!strings.Contains(errOut, "(a compaction writes one: alisio-lsp compact SESSION)") {
		t.Fatalf("checkpoint of a session never compacted: %d %s", code, errOut)
	}
	mustCLI(t, data, "compact", id)
	doc := mustCLI(t, data, "checkpoint", id)
	if !strings.HasPrefix(doc, "{\n  \"goal\": ") {
		t.Fatalf("editable checkpoint:\n%.300s", doc)
	}
	if _, errOut, code := cli(t, data, `{"goal": 1}`, "checkpoint", id, "--set", "-"); code == 0 ||
		!strings.Contains(errOut, "goal: got number, want string; instructions is missing") || !strings.Contains(errOut, "Nothing was saved") {
		t.Fatalf("a bad checkpoint: %d %s", code, errOut)
	}
	file := filepath.Join(t.TempDir(), "checkpoint.json")
	if _, errOut, code := cli(t, data, "", "checkpoint", id, "--set", file); code == 0 || !strings.Contains(errOut, "there is no file "+file+": write the checkpoint there first") {
		t.Fatalf("--set of a file that does not exist: %d %s", code, errOut)
	}
	must(t, os.WriteFile(file, []byte(strings.Replace(doc, `"goal": "`, `"goal": "Edited from the shell. `, 1)), 0o644))
	if out := mustCLI(t, data, "checkpoint", id, "--set", file); !strings.Contains(out, "is replaced") {
		t.Fatalf("--set: %s", out)
	}
	if doc := mustCLI(t, data, "checkpoint", id); !strings.Contains(doc, "Edited from the shell.") {
		t.Fatalf("after --set:\n%.300s", doc)
	}
	if out := mustCLI(t, data, "checkpoint", id, "--set", file); !strings.Contains(out, "is unchanged: the document is the checkpoint in force, so nothing was saved") {
		t.Fatalf("--set of the same document again: %s", out)
	}
	if out := mustCLI(t, data, "compact", id, "--undo"); !strings.Contains(out, "Undid the last checkpoint edit") || !strings.Contains(out, "Undo again (alisio-lsp --data-dir "+data+" compact "+id+" --undo)") {
		t.Fatalf("undo of the edit: %s", out)
	}
	if out := mustCLI(t, data, "compact", id, "--undo"); !strings.Contains(out, "Undid the last compaction") {
		t.Fatalf("undo of the compaction: %s", out)
	}
	if after := mustCLI(t, data, "sessions", "export", id); after != before {
		t.Fatal("the export after undoing differs from the one before the compaction")
	}
	if _, errOut, code := cli(t, data, "", "compact", id, "--undo"); code == 0 || !strings.Contains(errOut, "there is nothing to undo") {
		t.Fatalf("a third undo: %d %s", code, errOut)
	}
}

// TestCLI_WordsForMistakes: --version works; an empty prompt, a group command without its subcommand and a
// mistyped subcommand fail, naming what to type.
func TestCLI_WordsForMistakes(t *testing.T) {
	data := t.TempDir()
	if out := mustCLI(t, data, "--version"); !strings.HasPrefix(out, "alisio-lsp ") || !strings.Contains(out, "store format") {
		t.Fatalf("--version: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"prompt", " "}, "the prompt is empty"},
		{[]string{"sessions", "lst"}, `unknown command "lst" for alisio-lsp sessions; did you mean list?`},
		{[]string{"sessions"}, "alisio-lsp sessions needs a subcommand: delete, export"},
		{[]string{"memories", "rm"}, `unknown command "rm" for alisio-lsp memories`},
		{[]string{"sessions", "import", "-", "--workspace", "/nonexistent/ws"}, "--workspace /nonexistent/ws is not a folder"},
	} {
		if _, errOut, code := cli(t, data, "", tc.args...); code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want it to say %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestCLI_ContextNamesTheProjectRules: `context` in words names the workspace's AGENTS.md and its size.
func TestCLI_ContextNamesTheProjectRules(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("Never edit files under vendor/.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(file, []byte(`[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(mustCLI(t, data, "sessions", "import", "--workspace", ws, file))
	if out := mustCLI(t, data, "context", id); !strings.Contains(out, "\nrules       AGENTS.md: ") {
		t.Fatalf("context does not name AGENTS.md:\n%s", out)
	}
}

// seedMemories stores texts as memories of workspace ws in the store of data, as the memory plugin would.
func seedMemories(t *testing.T, data, ws string, texts ...string) {
	t.Helper()
	st, err := storage.OpenDataDir(data, storage.DefaultOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddMemories(ws, "s0", texts); err != nil || st.Close() != nil {
		t.Fatal(err)
	}
}
