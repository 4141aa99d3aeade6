package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"go.lsp.dev/uri"
)

// editor is an LSP client over a real `alisio-lsp serve` process (a forwarder to the shared daemon).
type editor struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	mu    sync.Mutex
	next  int
	wait  map[int]chan map[string]any
	notes []map[string]any
}

func startEditor(t testing.TB, data, ws string, env ...string) *editor {
	t.Helper()
	return startServe(t, data, ws, []string{"serve"}, env...)
}

func startServe(t testing.TB, data, ws string, serve []string, env ...string) *editor {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"--data-dir", data}, serve...)...)
	cmd.Env = append(os.Environ(), append([]string{"ALISIO_DAEMON_IDLE=1s"}, env...)...)
	cmd.Dir = ws
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &editor{t: t, cmd: cmd, in: in, wait: map[int]chan map[string]any{}}
	go e.read(bufio.NewReader(out))
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return e
}

func (e *editor) read(r *bufio.Reader) {
	for {
		n := -1
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.TrimSpace(line) == "" && n >= 0 {
				break
			}
			fmt.Sscanf(line, "Content-Length: %d", &n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		e.mu.Lock()
		if id, ok := m["id"].(float64); ok && m["method"] == nil {
			if ch := e.wait[int(id)]; ch != nil {
				ch <- m
			}
		} else if m["method"] != nil {
			e.notes = append(e.notes, m)
		}
		e.mu.Unlock()
	}
}

func (e *editor) send(m map[string]any) {
	b, _ := json.Marshal(m)
	_, _ = io.WriteString(e.in, frame(string(b)))
}

// call sends a request and waits for its response (result or error).
func (e *editor) call(method string, params any) map[string]any {
	e.t.Helper()
	e.mu.Lock()
	e.next++
	id := e.next
	ch := make(chan map[string]any, 1)
	e.wait[id] = ch
	e.mu.Unlock()
	e.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		e.t.Fatalf("no answer to %s", method)
		return nil
	}
}

func (e *editor) initialize(ws string) {
	e.t.Helper()
	if r := e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": string(uri.File(ws)), "capabilities": map[string]any{}}); r["result"] == nil {
		e.t.Fatalf("initialize: %v", r)
	}
	e.send(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
}

func (e *editor) close() int {
	e.t.Helper()
	e.call("shutdown", nil)
	e.send(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	_ = e.cmd.Wait()
	return e.cmd.ProcessState.ExitCode()
}

func (e *editor) noted(substr string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, n := range e.notes {
		if b, _ := json.Marshal(n); strings.Contains(string(b), substr) {
			return true
		}
	}
	return false
}

func titles(r map[string]any) []string {
	var out []string
	res, _ := r["result"].(map[string]any)
	list, _ := res["sessions"].([]any)
	for _, s := range list {
		out = append(out, fmt.Sprint(s.(map[string]any)["title"]))
	}
	return out
}

// configFor writes a configuration file that points the provider at the local test provider at url.
func configFor(t *testing.T, url string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "cfg.json")
	if err := os.WriteFile(cfg, []byte(`{"provider":{"kind":"openai","baseURL":"`+url+`/v1","model":"alisio-test"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func ownerPID(t *testing.T, data string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(data, "owner.lock"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid == 0 {
		t.Fatalf("no owner pid: %v %q", err, raw)
	}
	return pid
}

// TestShared_FiveWindowsTwoWorkspacesAndTheCLI: five editor windows on two workspaces share one daemon: each
// sees its workspace's sessions, the CLI works while they run (through the daemon), every window exits 0, and
// the daemon leaves after its idle time, removing its socket.
func TestShared_FiveWindowsTwoWorkspacesAndTheCLI(t *testing.T) {
	data := t.TempDir()
	wsA, wsB := t.TempDir(), t.TempDir()
	var editors []*editor
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		ws := wsA
		if i%2 == 1 {
			ws = wsB
		}
		e := startEditor(t, data, ws)
		editors = append(editors, e)
		wg.Add(1)
		go func() { defer wg.Done(); e.initialize(ws) }()
	}
	wg.Wait()
	if r := editors[0].call("alisio/newSession", map[string]any{"title": "in A"}); r["result"] == nil {
		t.Fatalf("newSession: %v", r)
	}
	if r := editors[1].call("alisio/newSession", map[string]any{"title": "in B"}); r["result"] == nil {
		t.Fatalf("newSession: %v", r)
	}
	for i, e := range editors {
		want := "in A"
		if i%2 == 1 {
			want = "in B"
		}
		if got := titles(e.call("alisio/sessions", map[string]any{})); len(got) != 1 || got[0] != want {
			t.Fatalf("window %d sees %v; want [%s]", i, got, want)
		}
	}
	out, errOut, code := cli(t, data, "", "sessions", "list")
	if code != 0 || !strings.Contains(out, "in A") || !strings.Contains(out, "in B") {
		t.Fatalf("the CLI while the windows run: exit %d, %q %q", code, out, errOut)
	}
	// A command that reads stdin runs in the daemon with it; failures keep their exit status and message.
	if out, errOut, code := cli(t, data, `[{"role":"user","content":"piped"}]`, "sessions", "import", "-", "--workspace", wsA, "--title", "piped"); code != 0 || len(strings.TrimSpace(out)) != 36 {
		t.Fatalf("import - through the daemon: exit %d, %q %q", code, out, errOut)
	}
	if _, errOut, code := cli(t, data, "", "sessions", "show", "no-such-session"); code != 1 || !strings.Contains(errOut, "no-such-session") {
		t.Fatalf("a failing command through the daemon: exit %d, %q", code, errOut)
	}
	pid := ownerPID(t, data)
	for i, e := range editors {
		if c := e.close(); c != 0 {
			t.Fatalf("window %d exited %d", i, c)
		}
	}
	socket := filepath.Join(data, "daemon.sock")
	if os.Getenv("XDG_RUNTIME_DIR") != "" {
		t.Skip("socket lives in XDG_RUNTIME_DIR")
	}
	testwait.For(t, 15*time.Second, "the daemon to leave after its idle time", func() bool {
		_, serr := os.Stat(socket)
		return os.IsNotExist(serr) && !osproc.Alive(pid)
	})
}

// TestShared_OwnerKilledMidTurn: the daemon is SIGKILLed while a prompt runs; the window gets an error for it
// and a notice, a new daemon takes over, the window goes on working, and the prompt it had stored is kept.
func TestShared_OwnerKilledMidTurn(t *testing.T) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{{Text: "slow", DelayMs: 5000}, {Text: "fine"}}})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data, ws := t.TempDir(), t.TempDir()
	e := startServe(t, data, ws, []string{"--config", configFor(t, hs.URL), "serve"})
	e.initialize(ws)
	done := make(chan map[string]any, 1)
	go func() { done <- e.call("alisio/prompt", map[string]any{"text": "remember this prompt"}) }()
	testwait.For(t, 10*time.Second, "the prompt to reach the provider", func() bool { return len(srv.Requests()) > 0 })
	pid := ownerPID(t, data)
	if owner, err := os.FindProcess(pid); err != nil || owner.Kill() != nil {
		t.Fatalf("killing the daemon %d: %v", pid, err)
	}
	r := <-done
	if errObj, _ := r["error"].(map[string]any); errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "outcome is unknown") {
		t.Fatalf("the prompt during the crash: %v", r)
	}
	testwait.For(t, 10*time.Second, "a notice of the restart", func() bool { return e.noted("was restarted") })
	got := e.call("alisio/sessions", map[string]any{})
	if len(titles(got)) != 1 {
		t.Fatalf("after the restart: %v", got)
	}
	id := got["result"].(map[string]any)["sessions"].([]any)[0].(map[string]any)["id"]
	if newPID := ownerPID(t, data); newPID == pid {
		t.Fatal("no new daemon")
	}
	sess := e.call("alisio/session", map[string]any{"session": id})
	if b, _ := json.Marshal(sess); !strings.Contains(string(b), "remember this prompt") {
		t.Fatalf("the stored prompt was lost: %s", b)
	}
	if c := e.close(); c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestShared_ForwarderKeepsRetrying: when the daemon dies and its replacement cannot start (here another
// process holds the data directory's owner lock), the window is told, its requests are answered with an error
// at once, and the forwarder keeps trying until a daemon runs again, then says it is back. It used to stop for
// good after one failed restart, leaving the editor's requests unanswered.
func TestShared_ForwarderKeepsRetrying(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	e := startEditor(t, data, ws)
	e.initialize(ws)
	pid := ownerPID(t, data)
	lock, err := os.OpenFile(filepath.Join(data, "owner.lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if owner, err := os.FindProcess(pid); err != nil || owner.Kill() != nil {
		t.Fatalf("killing the daemon %d: %v", pid, err)
	}
	// Take the lock the moment the daemon's death frees it, before a replacement can.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if held, err := osproc.LockFile(lock); err == nil && !held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed daemon's lock was never freed")
		}
	}
	testwait.For(t, 40*time.Second, "a notice that the restart failed", func() bool { return e.noted("could not be restarted") })
	r := e.call("alisio/sessions", map[string]any{})
	if errObj, _ := r["error"].(map[string]any); errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "being restarted") {
		t.Fatalf("a request while no daemon runs: %v", r)
	}
	lock.Close() // the next attempt's daemon can start
	testwait.For(t, 60*time.Second, "a notice that the daemon is back", func() bool { return e.noted("the shared daemon is back") })
	if r := e.call("alisio/sessions", map[string]any{}); r["result"] == nil {
		t.Fatalf("after the daemon came back: %v", r)
	}
	if c := e.close(); c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestShared_NotASocketIsLeftAlone: a file or a directory where the shared daemon's socket goes is refused with
// a message naming it, and left as it was (it used to be deleted and replaced by the socket).
func TestShared_NotASocketIsLeftAlone(t *testing.T) {
	for _, kind := range []string{"file", "directory"} {
		t.Run(kind, func(t *testing.T) {
			data, ws := t.TempDir(), t.TempDir()
			sock := filepath.Join(data, "daemon.sock")
			if kind == "file" {
				must(t, os.WriteFile(sock, []byte("precious"), 0o600))
			} else {
				must(t, os.Mkdir(sock, 0o700))
				must(t, os.WriteFile(filepath.Join(sock, "inside"), []byte("precious"), 0o600))
			}
			e := startEditor(t, data, ws, "XDG_RUNTIME_DIR=") // the socket then goes in the data directory
			r := e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": string(uri.File(ws)), "capabilities": map[string]any{}})
			msg := fmt.Sprint(r["error"])
			if !strings.Contains(msg, sock+", where the shared daemon's socket goes, is a "+kind) || !strings.Contains(msg, "--no-shared") {
				t.Fatalf("initialize: %v", r)
			}
			precious := sock
			if kind == "directory" {
				precious = filepath.Join(sock, "inside")
			}
			if b, err := os.ReadFile(precious); err != nil || string(b) != "precious" {
				t.Fatalf("%s was changed: %q %v", precious, b, err)
			}
		})
	}
}

// TestShared_ForeignRuntimeDirIsRefused: a runtime directory ($XDG_RUNTIME_DIR) of another user is not
// where alisio puts or looks for its socket.
func TestShared_ForeignRuntimeDirIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" || os.Getuid() != 0 {
		t.Skip("giving a directory to another user needs root (and Unix owners)")
	}
	data, ws, rt := t.TempDir(), t.TempDir(), t.TempDir()
	must(t, os.Chown(rt, 65534, 65534))
	e := startEditor(t, data, ws, "XDG_RUNTIME_DIR="+rt)
	r := e.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": string(uri.File(ws)), "capabilities": map[string]any{}})
	if msg := fmt.Sprint(r["error"]); !strings.Contains(msg, rt+", belongs to another user (uid 65534)") {
		t.Fatalf("initialize: %v", r)
	}
}

// TestServe_InvalidConfigFileIsShownInTheEditor: with an invalid --config, the private and the shared server
// start anyway (they used to exit with code 1 before answering initialize, the reason only on stderr, which
// editors hide), answer initialize and show the problem to the user.
func TestServe_InvalidConfigFileIsShownInTheEditor(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.json")
	must(t, os.WriteFile(bad, []byte(`{"limits":{"maxContextChars":5}}`), 0o600))
	for _, serve := range [][]string{{"--config", bad, "serve", "--no-shared"}, {"--config", bad, "serve"}} {
		t.Run(strings.Join(serve[2:], " "), func(t *testing.T) {
			data, ws := t.TempDir(), t.TempDir()
			e := startServe(t, data, ws, serve)
			e.initialize(ws)
			for deadline := time.Now().Add(10 * time.Second); !e.noted("limits.maxContextChars"); time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the configuration problem was not shown")
				}
			}
			if !e.noted("runs with the default settings") || !e.noted(":AlisioRestart") {
				t.Fatalf("notices: %v", e.notes)
			}
			if r := e.call("alisio/sessions", map[string]any{}); r["result"] == nil {
				t.Fatalf("sessions with the default settings: %v", r)
			}
			if c := e.close(); c != 0 {
				t.Fatalf("exit %d", c)
			}
		})
	}
}

// TestShared_RelativeWorkspaceIsTheCallers: with a shared daemon running elsewhere, a relative --workspace
// names a folder of the caller's directory, and sessions are stored with absolute paths (prompt used to open
// the daemon's folder, and import stored "ws2" as typed, which no later filter found).
func TestShared_RelativeWorkspaceIsTheCallers(t *testing.T) {
	data, daemonDir, caller := t.TempDir(), t.TempDir(), t.TempDir()
	e := startEditor(t, data, daemonDir)
	e.initialize(daemonDir)
	must(t, os.Mkdir(filepath.Join(caller, "ws2"), 0o755))
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"--data-dir", data}, args...)...)
		cmd.Dir, cmd.Stdin = caller, strings.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("alisio-lsp %v: %v", args, err)
		}
		return string(out)
	}
	id := strings.TrimSpace(run(`[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`, "sessions", "import", "--workspace", "ws2/../ws2", "-"))
	abs := filepath.Join(caller, "ws2")
	if out := run("", "--json", "sessions", "show", id); !strings.Contains(out, `"workspace":"`+abs+`"`) {
		t.Fatalf("stored workspace: %s", out)
	}
	if out := run("", "sessions", "list", "--workspace", abs); !strings.Contains(out, id) {
		t.Fatalf("list by absolute path: %s", out)
	}
	if out := run("", "sessions", "list", "--workspace", "ws2"); !strings.Contains(out, id) {
		t.Fatalf("list by relative path: %s", out)
	}
	if out := run("", "tools", "--workspace", "ws2"); !strings.Contains(out, abs) {
		t.Fatalf("tools: %s", out)
	}
}

// TestShared_TwoWindowsInTheSameMillisecond: two forwarders start at once; one daemon wins the lock and both
// windows work.
func TestShared_TwoWindowsInTheSameMillisecond(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	var editors [2]*editor
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range editors {
		editors[i] = startEditor(t, data, ws)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			editors[i].initialize(ws)
		}()
	}
	close(start)
	wg.Wait()
	editors[0].call("alisio/newSession", map[string]any{"title": "shared"})
	if got := titles(editors[1].call("alisio/sessions", map[string]any{})); len(got) != 1 || got[0] != "shared" {
		t.Fatalf("the second window sees %v", got)
	}
	for _, e := range editors {
		if c := e.close(); c != 0 {
			t.Fatalf("exit %d", c)
		}
	}
}

// BenchmarkStatus measures an alisio/status round trip from the editor: through the forwarder to the shared
// daemon, and to a private daemon (serve --no-shared), the same binary.
func BenchmarkStatus(b *testing.B) {
	for _, mode := range []struct {
		name  string
		serve []string
	}{{"shared", []string{"serve"}}, {"private", []string{"serve", "--no-shared"}}} {
		b.Run(mode.name, func(b *testing.B) {
			data, ws := b.TempDir(), b.TempDir()
			e := startServe(b, data, ws, mode.serve)
			e.initialize(ws)
			r := e.call("alisio/newSession", map[string]any{"title": "bench"})
			id := r["result"].(map[string]any)["session"]
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := e.call("alisio/status", map[string]any{"session": id}); r["result"] == nil {
					b.Fatal(r)
				}
			}
			b.StopTimer()
			e.close()
		})
	}
}

// TestShared_BadInputFromTheEditor: the forwarder reads the editor as the daemon does: a frame declaring 10^12
// bytes, one without Content-Length and one cut short are each answered with an error, and the requests that
// follow still reach the daemon.
func TestShared_BadInputFromTheEditor(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	e := startEditor(t, data, ws)
	e.initialize(ws)
	ping := func(id int) string {
		return frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"alisio/sessions"}`, id))
	}
	e.mu.Lock()
	ch := map[int]chan map[string]any{}
	for _, id := range []int{101, 102, 103} {
		ch[id] = make(chan map[string]any, 1)
		e.wait[id] = ch[id]
	}
	e.mu.Unlock()
	_, _ = io.WriteString(e.in, "Content-Length: 1000000000000\r\n\r\n"+ping(101))
	_, _ = io.WriteString(e.in, "Content-Type: x\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"x\"}"+ping(102))
	_, _ = io.WriteString(e.in, "Content-Length: 400\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":98,\"me"+ping(103))
	for _, id := range []int{101, 102, 103} {
		select {
		case m := <-ch[id]:
			if m["result"] == nil {
				t.Fatalf("request %d after bad input: %v", id, m)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("request %d after bad input was never answered", id)
		}
	}
	if c := e.close(); c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestShared_CtrlCOfACommandRunInTheDaemon: `alisio-lsp prompt` run while the daemon holds the store runs in
// it; interrupting the CLI (Ctrl-C), or closing its terminal (SIGHUP), stops the turn in the daemon (the
// provider sees its request cancelled) and says so.
func TestShared_CtrlCOfACommandRunInTheDaemon(t *testing.T) {
	srv := providertest.New(providertest.Script{Replies: []providertest.Reply{{Text: "too slow", DelayMs: 60_000}}, Loop: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	data, ws := t.TempDir(), t.TempDir()
	cfg := configFor(t, hs.URL)
	e := startServe(t, data, ws, []string{"--config", cfg, "serve"})
	e.initialize(ws)
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		asked := len(srv.Requests())
		var stderr bytes.Buffer
		prompt := exec.Command(binary, "--data-dir", data, "--config", cfg, "prompt", "--workspace", ws, "wait for it")
		prompt.Stderr = &stderr
		if err := prompt.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(15 * time.Second); len(srv.Requests()) == asked; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = prompt.Process.Kill()
				t.Fatalf("%v: the prompt never reached the provider", sig)
			}
		}
		if err := prompt.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		if err := prompt.Wait(); prompt.ProcessState.ExitCode() != 130 || !strings.Contains(stderr.String(), "alisio-lsp: stopped") {
			t.Fatalf("the CLI after %v: %v (exit %d; want 130), stderr %q", sig, err, prompt.ProcessState.ExitCode(), stderr.String())
		}
		for deadline := time.Now().Add(15 * time.Second); srv.Cancelled() <= i; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the daemon kept running the turn after its CLI got %v", sig)
			}
		}
	}
	if c := e.close(); c != 0 {
		t.Fatalf("exit %d", c)
	}
}

// TestShared_DaemonLeavesWhenItsDataDirIsRemoved: a shared daemon whose data directory is deleted under it
// (a test's temp dir, a user's cleanup) stops within seconds instead of retrying a flush into the void forever.
func TestShared_DaemonLeavesWhenItsDataDirIsRemoved(t *testing.T) {
	data, ws := filepath.Join(t.TempDir(), "data"), t.TempDir()
	e := startServe(t, data, ws, []string{"serve"}, "ALISIO_DAEMON_IDLE=10m")
	e.initialize(ws)
	pid := ownerPID(t, data)
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); osproc.Alive(pid); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			t.Fatalf("the daemon %d outlived its removed data directory", pid)
		}
	}
	// The window is told, and the directory is not made again behind the user's back.
	for deadline := time.Now().Add(30 * time.Second); !e.noted("was removed"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the editor was not told that the data directory was removed")
		}
	}
	if _, err := os.Stat(data); err == nil {
		t.Fatal("the forwarder made the removed data directory again")
	}
	_ = e.cmd.Process.Kill()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestShared_CLIWaitsForARestartingDaemon: commands run while the shared daemon is being replaced (killed, and
// started again by an editor's forwarder) wait for the new one instead of failing on the store's lock (5 of
// 30 used to fail "store is locked").
func TestShared_CLIWaitsForARestartingDaemon(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	e := startEditor(t, data, ws)
	e.initialize(ws)
	for round := range 3 {
		for deadline := time.Now().Add(30 * time.Second); e.call("alisio/sessions", map[string]any{})["result"] == nil; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the daemon did not come back")
			}
		}
		pid := ownerPID(t, data)
		if owner, err := os.FindProcess(pid); err != nil || owner.Kill() != nil {
			t.Fatalf("killing the daemon %d: %v", pid, err)
		}
		for i := range 10 {
			if _, errOut, code := cli(t, data, "", "sessions", "list"); code != 0 {
				t.Fatalf("round %d, command %d during the restart: exit %d: %s", round, i, code, errOut)
			}
		}
	}
	if c := e.close(); c != 0 {
		t.Fatalf("exit %d", c)
	}
}
