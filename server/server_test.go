package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/internal/testwait"
	"github.com/alisio-lsp/alisio-lsp/transcript/synthetic"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/uri"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server"
	"github.com/alisio-lsp/alisio-lsp/server/servertest"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/transcripttest"
)

type env struct {
	client   *servertest.Client
	store    *storage.Store
	ws       string
	provider *providertest.Server
	cfg      config.Config
	// hub is what the daemon's connections share; another window of the same daemon passes it too.
	hub *server.Hub
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// start runs a daemon with a real Badger store and, when script is not nil, the local test provider.
func start(t *testing.T, script *providertest.Script, mutate func(*config.Config)) *env {
	t.Helper()
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(t.TempDir(), "store")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cfg := config.Default()
	e := &env{store: st, ws: t.TempDir(), hub: server.NewHub(0)}
	if script != nil {
		e.provider = providertest.New(*script)
		hs := httptest.NewServer(e.provider)
		t.Cleanup(hs.Close)
		cfg.Provider = config.Provider{Kind: "openai", BaseURL: hs.URL + "/v1", Model: "alisio-test"}
	}
	if mutate != nil {
		mutate(&cfg)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.client = servertest.Start(t, server.Options{Config: cfg, Store: st, Hub: e.hub, StatusInterval: 20 * time.Millisecond, Provider: provider.Options{MaxRetries: 0}})
	return e
}

func (e *env) init(t *testing.T, options any) map[string]any {
	t.Helper()
	res, err := e.client.Initialize(ctx(t), e.ws, options, true, false)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func rpcCode(err error) jsonrpc2.Code {
	var je *jsonrpc2.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func TestLifecycle(t *testing.T) {
	e := start(t, nil, nil)
	if err := e.client.Call(ctx(t), "alisio/sessions", nil, nil); rpcCode(err) != -32002 {
		t.Fatalf("request before initialize: %v", err)
	}
	res := e.init(t, nil)
	exp := res["capabilities"].(map[string]any)["experimental"].(map[string]any)["alisio"].(map[string]any)
	if !strings.Contains(fmt.Sprint(exp["methods"]), "alisio/prompt") {
		t.Fatalf("capabilities %v", res)
	}
	if err := e.client.Call(ctx(t), "initialize", map[string]any{}, nil); err == nil {
		t.Fatal("a second initialize was accepted")
	}
	if err := e.client.Call(ctx(t), "textDocument/hover", map[string]any{}, nil); rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}
	if err := e.client.Call(ctx(t), "alisio/nothing", nil, nil); rpcCode(err) != jsonrpc2.MethodNotFound {
		t.Fatalf("unknown alisio method: %v", err)
	}
	if err := e.client.Call(ctx(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Call(ctx(t), "alisio/sessions", nil, nil); rpcCode(err) != jsonrpc2.InvalidRequest {
		t.Fatalf("request after shutdown: %v", err)
	}
	_ = e.client.Notify("exit", nil)
	if code := <-e.client.ExitCode; code != 0 {
		t.Fatalf("exit after shutdown: code %d", code)
	}
	e.client.ExitCode <- 0 // for the cleanup
}

func TestExitWithoutShutdown(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	_ = e.client.Notify("exit", nil)
	if code := <-e.client.ExitCode; code != 1 {
		t.Fatalf("exit without shutdown: code %d", code)
	}
	e.client.ExitCode <- 1
}

func eventTypes(notes []servertest.Notification) []string {
	var out []string
	for _, n := range notes {
		var p struct {
			V    int    `json:"v"`
			Type string `json:"type"`
		}
		_ = json.Unmarshal(n.Params, &p)
		if p.V == 1 {
			out = append(out, p.Type)
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestWholeSession drives prompt → tools → automatic compaction → meter updates → manual compact with a
// focus → checkpoint, through the local test provider.
func TestWholeSession(t *testing.T) {
	var replies []providertest.Reply
	for i := 0; i < 10; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call_" + strconv.Itoa(i), Name: "read_file",
			Arguments: `{"path":"big.txt"}`}}})
	}
	replies = append(replies, providertest.Reply{Text: "done"})
	e := start(t, &providertest.Script{Replies: replies}, func(c *config.Config) { c.Limits.MaxContextChars = 20_000 })
	// Read ten times, 2,500 chars each (the same on every system): the compaction threshold is crossed.
	if err := os.WriteFile(filepath.Join(e.ws, "big.txt"), []byte(strings.Repeat(strings.Repeat("w", 49)+"\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	e.init(t, nil)
	var created struct{ Session string }
	if err := e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": "t"}, &created); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Session string
		Reply   string
	}
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": created.Session, "text": "run it ten times. Never push."}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Reply != "done" || res.Session != created.Session {
		t.Fatalf("prompt %+v", res)
	}
	if v := e.provider.Violations(); len(v) > 0 {
		t.Fatalf("invalid requests reached the provider: %v", v)
	}
	if err := e.provider.CheckBudget(20_000); err != nil {
		t.Fatal(err)
	}
	types := eventTypes(e.client.Notifications("alisio/event"))
	for _, want := range []string{"tool_call", "tool_result", "compaction_started", "compaction_completed", "reply"} {
		if !has(types, want) {
			t.Fatalf("no %s event among %v", want, types)
		}
	}
	e.client.Await(t, 5*time.Second, "a status notification", func(n []servertest.Notification) bool {
		for _, x := range n {
			if x.Method == "alisio/status" && strings.Contains(string(x.Params), `"hardLimit":20000`) {
				return true
			}
		}
		return false
	})
	// Progress: the client supports it, so the prompt ran under a server-created token.
	if !has(e.client.ServerRequests(), "window/workDoneProgress/create") || len(e.client.Notifications("$/progress")) < 2 {
		t.Fatal("no work-done progress")
	}

	var comp struct {
		Event struct {
			Type    string
			Partial bool
			Summary string
		}
	}
	err := e.client.Call(ctx(t), "alisio/compact", map[string]any{"session": created.Session, "focus": "the push rule"}, &comp)
	if err != nil && !strings.Contains(err.Error(), "not enough history") && !strings.Contains(err.Error(), "would not shrink") {
		t.Fatal(err)
	}
	// The compaction events arrive whole over the wire (the JSON-RPC library's encoder once dropped the text,
	// boolean and list fields of the embedded event): the automatic one's reason and rule, and a skipped
	// manual one's reason and sentence, with the error's kind saying it was said.
	var events []map[string]any
	for _, n := range e.client.Notifications("alisio/event") {
		var ev map[string]any
		if json.Unmarshal(n.Params, &ev) == nil && strings.HasPrefix(fmt.Sprint(ev["type"]), "compaction_") {
			events = append(events, ev)
		}
	}
	if ev := events[0]; ev["reason"] != "auto" || ev["rule"] == nil || ev["summary"] == "" {
		t.Fatalf("the automatic compaction's first event: %v", ev)
	}
	if last := events[len(events)-1]; err != nil && (last["type"] != "compaction_skipped" || last["reason"] != "manual" || last["message"] == nil) {
		t.Fatalf("the skipped manual compaction's event: %v", last)
	}
	// A completed manual compaction answers with its compaction_completed event's sentence (fidelity and the
	// plugins' reports included).
	if last := events[len(events)-1]; err == nil && (last["type"] != "compaction_completed" || last["summary"] != comp.Event.Summary) {
		t.Fatalf("the compaction answered %q; its event said %v", comp.Event.Summary, last["summary"])
	}
	var je *jsonrpc2.Error
	if err != nil && (!errors.As(err, &je) || !strings.Contains(string(*je.Data), `"kind":"nothingToCompact"`)) {
		t.Fatalf("the skipped compaction's error: %v", err)
	}
	var ck struct {
		Checkpoint struct {
			Instructions []string
		}
		Partial          bool
		ReplacedMessages int
	}
	if err := e.client.Call(ctx(t), "alisio/checkpoint", map[string]any{"session": created.Session}, &ck); err != nil {
		t.Fatal(err)
	}
	if ck.ReplacedMessages == 0 || !strings.Contains(strings.Join(ck.Checkpoint.Instructions, " "), "Never push") {
		t.Fatalf("checkpoint %+v", ck)
	}
	v, err := e.store.Transcript(created.Session)
	if err != nil {
		t.Fatal(err)
	}
	if err := transcripttest.CheckStructure(v.Messages); err != nil {
		t.Fatal(err)
	}
	var sess struct {
		Messages []transcript.Message
	}
	if err := e.client.Call(ctx(t), "alisio/session", map[string]any{"session": created.Session, "includeCompacted": true}, &sess); err != nil || len(sess.Messages) <= len(v.Messages) {
		t.Fatalf("session with compacted messages: %v, %d", err, len(sess.Messages))
	}
	var tools struct{ CatalogChars int }
	if err := e.client.Call(ctx(t), "alisio/tools", nil, &tools); err != nil || tools.CatalogChars == 0 {
		t.Fatalf("tools: %v", err)
	}
}

func TestCancelAndConcurrency(t *testing.T) {
	e := start(t, &providertest.Script{Replies: []providertest.Reply{{Text: "slow", DelayMs: 10_000}}}, nil)
	e.init(t, nil)
	var created struct{ Session string }
	_ = e.client.Call(ctx(t), "alisio/newSession", nil, &created)
	done := make(chan error, 1)
	go func() {
		done <- e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": created.Session, "text": "hi"}, nil)
	}()
	// While the prompt runs, other requests are served.
	time.Sleep(200 * time.Millisecond)
	var st map[string]any
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, &st); err != nil {
		t.Fatalf("status during a prompt: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("status was answered only after the prompt ended (%v)", err)
	default: // the prompt (a 10 s reply) is still running: status did not wait for it
	}
	// The prompt was the client's request id 2 (after initialize): cancel it by its numeric id.
	for _, id := range []int{2, 3, 4} {
		_ = e.client.Notify("$/cancelRequest", map[string]any{"id": id})
	}
	_ = e.client.Notify("$/cancelRequest", map[string]any{"id": "no-such-request"})
	select {
	case err := <-done:
		if rpcCode(err) != -32800 {
			t.Fatalf("cancelled prompt: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the prompt did not end it")
	}
}

// TestCancelWhileTheAgentIsBuilt: the agent is built outside the connection's locks. While its build waits
// on a provider whose model list takes 10 s, a settings notification does not stall the read loop, and a
// prompt cancelled meanwhile is answered as cancelled long before the build ends (it used to wait for it).
func TestCancelWhileTheAgentIsBuilt(t *testing.T) {
	release := make(chan struct{})
	models := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/models") {
			select {
			case models <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-time.After(10 * time.Second):
			case <-r.Context().Done():
			}
		}
		http.Error(w, "not here", http.StatusNotFound)
	}))
	defer slow.Close()
	defer close(release)
	e := start(t, nil, func(c *config.Config) {
		c.Provider = config.Provider{Kind: "openai", BaseURL: slow.URL + "/v1", Model: "slow"}
	})
	e.init(t, nil)
	done := make(chan error, 1)
	go func() { done <- e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "hi"}, nil) }()
	select {
	case <-models:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent's build never asked for the model list")
	}
	// A notification on the read loop, then the cancellation behind it.
	_ = e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"alisio": map[string]any{"limits": map[string]any{"maxContextChars": 50_000}}}})
	// The build may have been started by initialize or the meter, before the prompt's request was even
	// written: the cancellation is repeated until the prompt answers, so it cannot miss the request.
	sent := time.Now()
	deadline := time.After(5 * time.Second)
	for {
		_ = e.client.Notify("$/cancelRequest", map[string]any{"id": 2}) // the prompt is request 2 (after initialize)
		select {
		case err := <-done:
			if rpcCode(err) != -32800 {
				t.Fatalf("the cancelled prompt: %v", err)
			}
			t.Logf("cancelled in %v while the agent was being built", time.Since(sent))
			return
		case <-deadline:
			t.Fatal("the cancellation waited for the agent's build")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func TestSettings(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, map[string]any{"alisio": map[string]any{"compaction": map[string]any{"threshold": 7}}})
	e.client.Await(t, 5*time.Second, "an error message about the setting", func(n []servertest.Notification) bool {
		for _, x := range n {
			if x.Method == "window/showMessage" && strings.Contains(string(x.Params), "compaction.threshold: 7 (allowed: 0.1–0.99)") {
				return true
			}
		}
		return false
	})
	var created struct{ Session string }
	_ = e.client.Call(ctx(t), "alisio/newSession", nil, &created)
	var st struct{ HardLimit, Threshold float64 }
	_ = e.client.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, &st)
	if st.Threshold != 0.85 {
		t.Fatalf("the invalid setting was applied: %+v", st)
	}
	_ = e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"alisio": map[string]any{"limits": map[string]any{"maxContextChars": 50_000}}}})
	testwait.For(t, 5*time.Second, "lowering maxContextChars to take effect", func() bool {
		_ = e.client.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, &st)
		return st.HardLimit == 50_000
	})
}

// TestInvalidSettingsAreNamedByTheNextPrompt: editor settings that set a provider but hold one unknown key
// are refused whole; the next prompt names that key rather than only saying no provider is configured.
func TestInvalidSettingsAreNamedByTheNextPrompt(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, map[string]any{"alisio": map[string]any{
		"provider":      map[string]any{"kind": "openai", "baseURL": "http://127.0.0.1:9/v1", "model": "m"},
		"futureSetting": true,
	}})
	err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "futureSetting") || !strings.Contains(err.Error(), "not applied") {
		t.Fatalf("a prompt after refused settings: %v", err)
	}
	// Valid settings since: the plain advice again.
	_ = e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"alisio": map[string]any{}}})
	testwait.For(t, 5*time.Second, "the plain advice once valid settings came", func() bool {
		err = e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "hi"}, nil)
		return err != nil && !strings.Contains(err.Error(), "futureSetting") && strings.Contains(err.Error(), "provider.kind")
	})
}

func TestInvalidParamsForEveryMethod(t *testing.T) {
	e := start(t, nil, nil)
	res := e.init(t, nil)
	// Every method the daemon announces, so that a new one cannot skip the check.
	announced := res["capabilities"].(map[string]any)["experimental"].(map[string]any)["alisio"].(map[string]any)["methods"].([]any)
	if len(announced) < 9 {
		t.Fatalf("announced methods: %v", announced)
	}
	for _, raw := range announced {
		m := raw.(string)
		err := e.client.Call(ctx(t), m, map[string]any{"bogus": true}, nil)
		if rpcCode(err) != jsonrpc2.InvalidParams {
			t.Errorf("%s with an unknown field: %v", m, err)
		}
		err = e.client.Call(ctx(t), m, []int{1, 2}, nil)
		if rpcCode(err) != jsonrpc2.InvalidParams {
			t.Errorf("%s with an array: %v", m, err)
		}
	}
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "  "}, nil); rpcCode(err) != jsonrpc2.InvalidParams {
		t.Errorf("empty prompt: %v", err)
	}
	if err := e.client.Call(ctx(t), "alisio/session", map[string]any{"session": "nope"}, nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown session: %v", err)
	}
	// Without a provider a prompt says how to configure one.
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "hi"}, nil); err == nil || !strings.Contains(err.Error(), "provider.kind") {
		t.Errorf("prompt without a provider: %v", err)
	}
}

func TestRecoverFlow(t *testing.T) {
	e := start(t, &providertest.Script{Replies: []providertest.Reply{{Text: "ok"}}}, nil)
	e.init(t, nil)
	sess, _ := e.store.CreateSession(storage.Session{Workspace: e.ws}, []transcript.Message{
		{Role: transcript.RoleUser, Text: "deploy"},
		{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "call_x", Name: "run_command", Arguments: "{}"}}}})
	err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": sess.ID, "text": "go"}, nil)
	if err == nil || !strings.Contains(err.Error(), "call_x") || !strings.Contains(err.Error(), ":AlisioRecover") {
		t.Fatalf("prompt on an uncertain session: %v", err)
	}
	// The error carries its kind and the calls, for the editors to decide on.
	var je *jsonrpc2.Error
	var data api.ErrorData
	if !errors.As(err, &je) || je.Data == nil || json.Unmarshal(*je.Data, &data) != nil ||
		data.Kind != api.KindUncertainCalls || data.Session != sess.ID || !slices.Equal(data.Calls, []string{"call_x"}) {
		t.Fatalf("the error's data: %v", err)
	}
	if err := e.client.Call(ctx(t), "alisio/compact", map[string]any{"session": sess.ID}, nil); err == nil || !strings.Contains(err.Error(), "call_x") {
		t.Fatalf("compact on an uncertain session: %v", err)
	}
	// Without acknowledge: the same error, in the user's words (no method name), for the editor to confirm.
	err = e.client.Call(ctx(t), "alisio/recover", map[string]any{"session": sess.ID}, nil)
	if data := errorData(err); data.Kind != api.KindUncertainCalls || !strings.Contains(err.Error(), "Record that their outcome is unknown") ||
		strings.Contains(err.Error(), "alisio/") {
		t.Fatalf("recover without acknowledge: %v", err)
	}
	if err := e.client.Call(ctx(t), "alisio/recover", map[string]any{"session": sess.ID, "acknowledge": true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": sess.ID, "text": "go"}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput sends garbage frames, a huge Content-Length, non-JSON-RPC bodies and requests before
// initialize over a raw pipe: every one gets an error answer, and the connection keeps working.
func TestBadInput(t *testing.T) {
	st, err := storage.Open(storage.DefaultOptions(filepath.Join(t.TempDir(), "store")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conn, code := servertest.RawPipe(t, server.Options{Config: config.Default(), Store: st, MaxFrame: 1 << 20})
	r := bufio.NewReader(conn)
	read := func() map[string]any {
		t.Helper()
		_ = conn.(interface{ SetReadDeadline(time.Time) error }).SetReadDeadline(time.Now().Add(5 * time.Second))
		length := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("reading a response: %v", err)
			}
			if strings.TrimSpace(line) == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return m
	}
	send := func(s string) {
		go func() { _, _ = io.WriteString(conn, s) }()
	}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","id":1,"method":"alisio/sessions"}`))
	if m := read(); errCode(m) != -32002 {
		t.Fatalf("before initialize: %v", m)
	}
	send(servertest.Frame(`this is not json`))
	if m := read(); errCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("garbage body: %v", m)
	}
	send(servertest.Frame(`{"hello":"world"}`))
	if m := read(); errCode(m) != -32600 {
		t.Fatalf("not JSON-RPC: %v", m)
	}
	send("Garbage-Header-Without-Colon\r\n\r\n")
	if m := read(); errCode(m) != -32700 {
		t.Fatalf("bad header: %v", m)
	}
	// Each broken frame below is followed by a valid request, which must still be answered.
	ping := func(id int) string {
		return servertest.Frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"alisio/sessions"}`, id))
	}
	answered := func(what string, id int) {
		t.Helper()
		if m := read(); m["id"] != float64(id) {
			t.Fatalf("after %s, the next request was not answered: %v", what, m)
		}
	}
	send("Content-Length: 5000000\r\n\r\n" + strings.Repeat("x", 5_000_000) + ping(10))
	if m := read(); errCode(m) != -32600 || !strings.Contains(fmt.Sprint(m["error"]), "limit") {
		t.Fatalf("oversized frame: %v", m)
	}
	answered("an oversized frame", 10)
	send("Content-Length: 1000000000000\r\n\r\n" + ping(11))
	if m := read(); errCode(m) != -32600 || !strings.Contains(fmt.Sprint(m["error"]), "limit") {
		t.Fatalf("a declared length of 10^12: %v", m)
	}
	answered("a declared length of 10^12", 11)
	send("Content-Type: application/json\r\n\r\n" + `{"jsonrpc":"2.0","id":99,"method":"alisio/sessions"}` + ping(12))
	if m := read(); errCode(m) != -32700 || !strings.Contains(fmt.Sprint(m["error"]), "Content-Length") {
		t.Fatalf("a frame without Content-Length: %v", m)
	}
	answered("a frame without Content-Length", 12)
	send("Content-Length: 400\r\n\r\n" + `{"jsonrpc":"2.0","id":98,"meth` + ping(13))
	if m := read(); errCode(m) != -32700 || !strings.Contains(fmt.Sprint(m["error"]), "truncated") {
		t.Fatalf("a truncated body: %v", m)
	}
	answered("a truncated body", 13)
	// A Content-Length 1 to 19 bytes too large takes the start of the next frame's header: the request is
	// answered with its own id and the next one is read.
	for extra := 1; extra <= 19; extra++ {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"alisio/sessions"}`, 100+extra)
		send(fmt.Sprintf("Content-Length: %d\r\n\r\n%s%s", len(body)+extra, body, ping(200+extra)))
		if m := read(); errCode(m) != -32600 || m["id"] != float64(100+extra) || !strings.Contains(fmt.Sprint(m["error"]), "larger than the message") {
			t.Fatalf("Content-Length %d bytes too large: %v", extra, m)
		}
		answered(fmt.Sprintf("a Content-Length %d bytes too large", extra), 200+extra)
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","id":null,"method":"alisio/sessions"}`))
	if m := read(); errCode(m) != -32600 || m["id"] != nil {
		t.Fatalf("id null: %v", m)
	}
	// Each bad request is answered with its own id, whenever it can be read, so the client's call completes.
	for _, tc := range []struct {
		what, frame string
		id          float64
		want        string
	}{
		{"no jsonrpc member", servertest.Frame(`{"id":20,"method":"alisio/sessions"}`), 20, `"jsonrpc" must be "2.0"`},
		{"jsonrpc 1.0", servertest.Frame(`{"jsonrpc":"1.0","id":21,"method":"alisio/sessions"}`), 21, `"jsonrpc" must be "2.0"`},
		{"an id but no method", servertest.Frame(`{"jsonrpc":"2.0","id":22,"params":{}}`), 22, "needs a method"},
		{"an oversized frame", servertest.Frame(`{"jsonrpc":"2.0","id":23,"method":"alisio/prompt","params":{"text":"` + strings.Repeat("x", 2<<20) + `"}}`), 23, "limit"},
	} {
		send(tc.frame + ping(30))
		if m := read(); errCode(m) != -32600 || m["id"] != tc.id || !strings.Contains(fmt.Sprint(m["error"]), tc.want) {
			t.Fatalf("%s: %v", tc.what, m)
		}
		answered(tc.what, 30)
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","id":1.5,"method":"alisio/sessions"}`))
	if m := read(); errCode(m) != -32600 || m["id"] != 1.5 || !strings.Contains(fmt.Sprint(m["error"]), "invalid id 1.5") {
		t.Fatalf("a fractional id: %v", m)
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"processId":1,"rootUri":` + strconv.Quote(string(uri.File(t.TempDir()))) + `,"capabilities":{}}}`))
	if m := read(); m["result"] == nil {
		t.Fatalf("initialize after bad input: %v", m)
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","id":"s-3","method":"alisio/sessions"}`))
	if m := read(); m["id"] != "s-3" || m["result"] == nil {
		t.Fatalf("string id: %v", m)
	}
	send(servertest.Frame(`{"jsonrpc":"2.0","method":"exit"}`))
	select {
	case c := <-code:
		if c != 1 {
			t.Fatalf("exit without shutdown: %d", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no exit")
	}
}

func TestSecondDaemonOnALockedStore(t *testing.T) {
	data := t.TempDir()
	first := servertest.Start(t, server.Options{Config: config.Default(), DataDir: data})
	if _, err := first.Initialize(ctx(t), t.TempDir(), nil, false, false); err != nil {
		t.Fatal(err)
	}
	if err := first.Call(ctx(t), "alisio/sessions", nil, nil); err != nil {
		t.Fatal(err)
	}
	second := servertest.Start(t, server.Options{Config: config.Default(), DataDir: data})
	if _, err := second.Initialize(ctx(t), t.TempDir(), nil, false, false); err != nil {
		t.Fatalf("initialize on a locked store must succeed: %v", err)
	}
	start := time.Now()
	err := second.Call(ctx(t), "alisio/sessions", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "locked") || !strings.Contains(err.Error(), "alisio.dataDir") || time.Since(start) > 20*time.Second {
		t.Fatalf("session method on a locked store: %v", err)
	}
	second.Await(t, 5*time.Second, "a warning", func(n []servertest.Notification) bool { return len(n) > 0 && n[0].Method == "window/showMessage" })
}

// TestStatusAfterInitialized: a restarted daemon shows the meter of the workspace's latest session at once.
func TestStatusAfterInitialized(t *testing.T) {
	e := start(t, nil, nil)
	sess, err := e.store.CreateSession(storage.Session{Workspace: e.ws}, synthetic.Generate(synthetic.Default(20)))
	if err != nil {
		t.Fatal(err)
	}
	e.init(t, nil)
	e.client.Await(t, 5*time.Second, "the meter of the existing session", func(n []servertest.Notification) bool {
		for _, x := range n {
			if x.Method == "alisio/status" && strings.Contains(string(x.Params), sess.ID) {
				return true
			}
		}
		return false
	})
}

// TestFirstRequestStatus: before the workspace has a session the meter is an error that says how to start one,
// unless the editor asks for the first request's (Show Context, :AlisioContext): the instructions and the tool
// catalog, no messages; the context has no parts yet.
func TestFirstRequestStatus(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	err := e.client.Call(ctx(t), "alisio/status", map[string]any{}, nil)
	if err == nil || !strings.Contains(err.Error(), "no session yet: send a message first (Alisio: Prompt in VS Code, :AlisioPrompt in Neovim)") {
		t.Fatalf("status with no session: %v", err)
	}
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || je.Data == nil || !strings.Contains(string(*je.Data), `"kind":"noSession"`) {
		t.Fatalf("status with no session carries no kind noSession: %v", err)
	}
	var st api.Status
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"firstRequest": true}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Session != "" || st.Messages != 0 || st.TranscriptChars != 0 || st.InstructionsChars == 0 || st.ToolsChars == 0 || st.Meter.Tokens == 0 {
		t.Fatalf("the first request's meter: %+v", st)
	}
	var parts api.ContextResult
	if err := e.client.Call(ctx(t), "alisio/context", map[string]any{}, &parts); err != nil || parts.Session != "" || len(parts.Parts) != 0 {
		t.Fatalf("context with no session: %+v %v", parts, err)
	}
	// Once there is a session, firstRequest changes nothing.
	sess, err := e.store.CreateSession(storage.Session{Workspace: e.ws}, synthetic.Generate(synthetic.Default(4)))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"firstRequest": true}, &st); err != nil || st.Session != sess.ID || st.Messages == 0 {
		t.Fatalf("status with a session: %+v %v", st, err)
	}
}

// TestFreeTextIsCapped: a title or a compaction focus past its cap is refused with a message that says the
// limit (a 50 MB title used to be stored and returned by every session list).
func TestFreeTextIsCapped(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	err := e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": strings.Repeat("t", 5<<20)}, nil)
	if err == nil || !strings.Contains(err.Error(), "session title is 5242880 characters long; it can be at most 200") {
		t.Fatalf("a 5 MB title: %v", err)
	}
	var created struct{ Session string }
	if err := e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": strings.Repeat("t", 200)}, &created); err != nil {
		t.Fatal(err)
	}
	err = e.client.Call(ctx(t), "alisio/compact", map[string]any{"session": created.Session, "focus": strings.Repeat("f", 2001)}, nil)
	if err == nil || !strings.Contains(err.Error(), "compaction focus is 2001 characters long") {
		t.Fatalf("a long focus: %v", err)
	}
	var list struct{ Sessions []struct{ Title string } }
	if err := e.client.Call(ctx(t), "alisio/sessions", nil, &list); err != nil || len(list.Sessions) != 1 {
		t.Fatalf("sessions: %+v %v", list, err)
	}
}

func TestMemoriesMethod(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	added, err := e.store.AddMemories(e.ws, "s", []string{"Use tabs.", "Never push."})
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Workspace string
		Memories  []storage.Memory
	}
	if err := e.client.Call(ctx(t), "alisio/memories", map[string]any{"delete": added[0].ID}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Workspace != e.ws || len(res.Memories) != 1 || res.Memories[0].Text != "Never push." {
		t.Fatalf("%+v", res)
	}
}

// TestMCPServersApplyLive: enabling an MCP server in the editor's settings adds its tools to alisio/tools
// without a restart; disabling it removes them.
func TestMCPServersApplyLive(t *testing.T) {
	srv := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "docs"}, nil)
	srv.AddTool(&sdkmcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdkmcp.CallToolRequest) (*sdkmcp.CallToolResult, error) {
			return &sdkmcp.CallToolResult{}, nil
		})
	hs := httptest.NewServer(sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, nil))
	defer hs.Close()
	e := start(t, nil, nil)
	e.init(t, nil)
	sources := func() []string {
		var res struct{ Sources []struct{ Source string } }
		if err := e.client.Call(ctx(t), "alisio/tools", nil, &res); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range res.Sources {
			out = append(out, s.Source)
		}
		return out
	}
	waitFor := func(want string) {
		t.Helper()
		testwait.For(t, 10*time.Second, "the tool sources "+want, func() bool { return strings.Join(sources(), ",") == want })
	}
	waitFor("built-in")
	set := func(disabled bool) {
		_ = e.client.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"alisio": map[string]any{
			"mcpServers": map[string]any{"docs": map[string]any{"url": hs.URL, "disabled": disabled}}}}})
	}
	set(false)
	waitFor("built-in,docs")
	set(true)
	waitFor("built-in")
}

// TestMeterReachesEveryWindowOfASession: two windows on one store (the shared daemon's case); the second shows
// a session, the first runs a turn on it, and the second's meter follows, calibrated alike.
func TestMeterReachesEveryWindowOfASession(t *testing.T) {
	e := start(t, &providertest.Script{Replies: []providertest.Reply{{Text: "done"}}}, nil)
	e.init(t, nil)
	other := servertest.Start(t, server.Options{Config: e.cfg, Store: e.store, Hub: e.hub, StatusInterval: 20 * time.Millisecond})
	if _, err := other.Initialize(ctx(t), e.ws, nil, false, false); err != nil {
		t.Fatal(err)
	}
	var created struct{ Session string }
	if err := e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": "shared"}, &created); err != nil {
		t.Fatal(err)
	}
	if err := other.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": created.Session, "text": "hello"}, nil); err != nil {
		t.Fatal(err)
	}
	// The other window's meter says the session was written elsewhere (a turn appends without a new epoch);
	// the meters of the window that ran it never do.
	other.Await(t, 5*time.Second, "the other window's meter after the turn", func(n []servertest.Notification) bool {
		for _, x := range n {
			if x.Method == "alisio/status" && strings.Contains(string(x.Params), created.Session) && strings.Contains(string(x.Params), `"messages":2`) &&
				strings.Contains(string(x.Params), `"changedElsewhere":true`) {
				return true
			}
		}
		return false
	})
	for _, x := range e.client.Notifications("alisio/status") {
		if strings.Contains(string(x.Params), `"changedElsewhere"`) {
			t.Errorf("the window that ran the turn got a meter saying it was written elsewhere: %s", x.Params)
		}
	}
	// Both windows calibrate the meter with the provider's report of the turn, whichever ran it.
	var mine, theirs api.Status
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, &mine); err != nil {
		t.Fatal(err)
	}
	if err := other.Call(ctx(t), "alisio/status", map[string]any{"session": created.Session}, &theirs); err != nil {
		t.Fatal(err)
	}
	if mine.LastReportedTokens == 0 || theirs.LastReportedTokens != mine.LastReportedTokens || theirs.CalibratedTokens != mine.CalibratedTokens {
		t.Fatalf("one session, two meters: reported %d/%d, calibrated %d/%d", mine.LastReportedTokens, theirs.LastReportedTokens, mine.CalibratedTokens, theirs.CalibratedTokens)
	}
}

// TestMeterFollowsTheCLI: a compaction the CLI runs in the shared daemon (on its store, outside every window)
// reaches the meter of a window that shows the session once the daemon says the store changed.
func TestMeterFollowsTheCLI(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	sess, err := e.store.CreateSession(storage.Session{Workspace: e.ws}, synthetic.Generate(synthetic.Default(60)))
	if err != nil {
		t.Fatal(err)
	}
	var before api.Status
	if err := e.client.Call(ctx(t), "alisio/status", map[string]any{"session": sess.ID}, &before); err != nil {
		t.Fatal(err)
	}
	cm := agent.NewContextManager(e.store, e.cfg, e.ws, compaction.Offline{})
	if _, err := cm.Compact(ctx(t), sess.ID, "", nil); err != nil {
		t.Fatal(err)
	}
	e.hub.StoreChanged()
	e.client.Await(t, 5*time.Second, "the meter after the CLI's compaction", func(n []servertest.Notification) bool {
		for _, x := range n {
			var st api.Status
			if x.Method == "alisio/status" && json.Unmarshal(x.Params, &st) == nil && st.Session == sess.ID && st.Messages < before.Messages && st.ChangedElsewhere {
				return true
			}
		}
		return false
	})
}

// TestSessionPages reads a long session through alisio/session a page at a time: by default its last
// DefaultPageMessages messages with the total, then any window the editor asks for, of the transcript or of
// the history with its compacted messages marked.
func TestSessionPages(t *testing.T) {
	e := start(t, nil, nil)
	e.init(t, nil)
	msgs := synthetic.Generate(synthetic.Default(450))[:450]
	msgs = append(msgs, transcript.Message{Role: transcript.RoleAssistant, ToolCalls: []transcript.ToolCall{{ID: "cut", Name: "run_command", Arguments: "{}"}}})
	sess, err := e.store.CreateSession(storage.Session{Workspace: e.ws}, msgs)
	if err != nil {
		t.Fatal(err)
	}
	type page struct {
		Messages          []transcript.Message
		Offset, Total     int
		CompactedMessages int
		UncertainCalls    []string
	}
	read := func(params map[string]any) page {
		t.Helper()
		params["session"] = sess.ID
		var p page
		if err := e.client.Call(ctx(t), "alisio/session", params, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v, err := e.store.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := read(map[string]any{})
	if last.Total != 451 || last.Offset != 451-server.DefaultPageMessages || len(last.Messages) != server.DefaultPageMessages ||
		last.Messages[0].ID != v.Messages[last.Offset].ID || last.Messages[len(last.Messages)-1].ID != v.Messages[450].ID {
		t.Fatalf("default page: offset %d of %d, %d messages", last.Offset, last.Total, len(last.Messages))
	}
	if fmt.Sprint(last.UncertainCalls) != "[cut]" {
		t.Fatalf("uncertain calls %v, want the IDs [cut]", last.UncertainCalls)
	}
	if first := read(map[string]any{"offset": 0, "limit": 100}); first.Offset != 0 || len(first.Messages) != 100 || first.Messages[99].ID != v.Messages[99].ID {
		t.Fatalf("first page: offset %d, %d messages", first.Offset, len(first.Messages))
	}
	if every := read(map[string]any{"offset": 0, "limit": 0}); len(every.Messages) != 451 {
		t.Fatalf("limit 0 gave %d of 451 messages", len(every.Messages))
	}
	if past := read(map[string]any{"offset": 1000}); past.Offset != 451 || len(past.Messages) != 0 {
		t.Fatalf("a page past the end: offset %d, %d messages", past.Offset, len(past.Messages))
	}
	err = e.client.Call(ctx(t), "alisio/session", map[string]any{"session": sess.ID, "offset": -5}, nil)
	if err == nil || !strings.Contains(err.Error(), "offset must be 0 or more") {
		t.Fatalf("negative offset: %v", err)
	}

	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: 300,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "checkpoint"}}}
	if _, err := e.store.Apply(sess.ID, rw); err != nil {
		t.Fatal(err)
	}
	hist := read(map[string]any{"includeCompacted": true, "offset": 250, "limit": 100})
	if hist.Total != 452 || hist.CompactedMessages != 300 || len(hist.Messages) != 100 {
		t.Fatalf("history page: %d of %d, %d compacted", len(hist.Messages), hist.Total, hist.CompactedMessages)
	}
	for i, m := range hist.Messages {
		if m.Compacted != (250+i < 300) {
			t.Fatalf("history message %d: compacted %v", 250+i, m.Compacted)
		}
	}
	// The checkpoint heads the transcript: alisio/checkpoint finds it without reading the rest.
	var ck struct {
		Text             string
		ReplacedMessages int
	}
	if err := e.client.Call(ctx(t), "alisio/checkpoint", map[string]any{"session": sess.ID}, &ck); err != nil || ck.Text != "checkpoint" || ck.ReplacedMessages != 300 {
		t.Fatalf("checkpoint: %v, %+v", err, ck)
	} // Show Context's breakdown is computed by the daemon and adds up to the transcript's size.
	var parts struct{ Parts []agent.ContextPart }
	if err := e.client.Call(ctx(t), "alisio/context", map[string]any{"session": sess.ID}, &parts); err != nil || len(parts.Parts) < 4 {
		t.Fatalf("context: %v, %+v", err, parts)
	}
	after, err := e.store.Session(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, p := range parts.Parts {
		sum += p.Chars
	}
	if sum != after.Head.Totals.Chars || parts.Parts[0].Chars != len("checkpoint") {
		t.Fatalf("context parts %+v add up to %d; the transcript has %d chars", parts.Parts, sum, after.Head.Totals.Chars)
	}

	// A second compaction replaces the first checkpoint and some originals: only those count as compacted
	// messages, in the page and in the list of sessions (the first checkpoint is not one the user wrote).
	v, err = e.store.Transcript(sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	drop := slices.IndexFunc(transcript.SafeBoundaries(v.Messages), func(b int) bool { return b > 10 })
	drop = transcript.SafeBoundaries(v.Messages)[drop]
	if _, err := e.store.Apply(sess.ID, transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Drop: drop,
		Insert: []transcript.Message{{Role: transcript.RoleUser, Summary: true, Text: "second checkpoint"}}}); err != nil {
		t.Fatal(err)
	}
	if hist := read(map[string]any{"includeCompacted": true}); hist.CompactedMessages != 300+drop-1 {
		t.Fatalf("after the second compaction of %d messages: %d compacted, want %d", drop, hist.CompactedMessages, 300+drop-1)
	}
	var list struct{ Sessions []api.SessionSummary }
	if err := e.client.Call(ctx(t), "alisio/sessions", nil, &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].CompactedMessages != 300+drop-1 {
		t.Fatalf("sessions: %v, %+v", err, list.Sessions)
	}
}

// TestBadFramesKeepMemoryBounded reads 20,000 malformed frames then a valid one: skipping each bad frame
// must not keep anything (each used to stack a new 64 KiB reader, 1.3 GB here).
func TestBadFramesKeepMemoryBounded(t *testing.T) {
	var input strings.Builder
	for range 20_000 {
		input.WriteString("Content-Length: 99999999999\r\n\r\n")
	}
	input.WriteString(servertest.Frame(`{"jsonrpc":"2.0","id":7,"method":"alisio/sessions"}`))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fr := server.NewFrameReader(strings.NewReader(input.String()), io.Discard, 0)
	body, err := fr.Next()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(fr)
	if err != nil || !strings.Contains(string(body), `"id":7`) {
		t.Fatalf("the valid frame after the bad ones: %q, %v", body, err)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 16<<20 {
		t.Fatalf("skipping 20,000 bad frames kept %d MiB", grown>>20)
	}
}

// TestPrivateDaemonLeavesWhenItsDataDirIsRemoved: a private daemon whose data directory is removed refuses
// the next prompt with a message saying so and how to go on, tells the editor, and leaves. It used to
// acknowledge prompts into deleted files and keep running, its store retrying a flush forever.
func TestPrivateDaemonLeavesWhenItsDataDirIsRemoved(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows does not let a folder be removed while its files are open")
	}
	data := filepath.Join(t.TempDir(), "data")
	c := servertest.Start(t, server.Options{Config: config.Default(), DataDir: data})
	if _, err := c.Initialize(ctx(t), t.TempDir(), nil, false, false); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx(t), "alisio/sessions", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	err := c.Call(ctx(t), "alisio/prompt", map[string]any{"text": "this would be lost"}, nil)
	if err == nil || !strings.Contains(err.Error(), "was removed while Alisio ran") || !strings.Contains(err.Error(), ":AlisioRestart") {
		t.Fatalf("a prompt after the data directory was removed: %v", err)
	}
	c.Await(t, 10*time.Second, "the editor told", func(n []servertest.Notification) bool {
		for _, note := range n {
			if note.Method == "window/showMessage" && strings.Contains(string(note.Params), "was removed") {
				return true
			}
		}
		return false
	})
	select {
	case code := <-c.ExitCode:
		c.ExitCode <- code // for the cleanup
		if code != 1 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon kept running without its data directory")
	}
}

// TestNothingTheUserSaidIsLost is issue 30's scenario through the daemon: a session compacted again and again
// by a model whose every checkpoint is empty still sends the user's first instruction and the files it read,
// quotes the user's words, and every compaction_completed says over the wire what the summary had kept.
func TestNothingTheUserSaidIsLost(t *testing.T) {
	const empty = `{"goal":"","instructions":[],"discoveries":[],"accomplished":[],"currentState":"","nextSteps":[],"relevantFiles":[]}`
	var replies, summaries []providertest.Reply
	const turns = 12
	for i := 0; i < turns; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprint("call_", i), Name: "read_file",
			Arguments: fmt.Sprintf(`{"path":"src/f%d.txt"}`, i)}}}, providertest.Reply{Text: fmt.Sprint("read ", i)})
		summaries = append(summaries, providertest.Reply{Text: empty})
	}
	e := start(t, &providertest.Script{Replies: replies, Summaries: summaries}, func(c *config.Config) {
		c.Limits.MaxContextChars = 12_000
		c.Compaction.KeepTurns = 1
	})
	for i := 0; i < turns; i++ {
		path := filepath.Join(e.ws, "src", fmt.Sprintf("f%d.txt", i))
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, []byte(strings.Repeat(strings.Repeat("w", 49)+"\n", 80)), 0o644))
	}
	e.init(t, nil)
	var created struct{ Session string }
	must(t, e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": "t"}, &created))
	for i := 0; i < turns; i++ {
		text := fmt.Sprintf("Turn %d: read src/f%d.txt.", i, i)
		if i == 0 {
			text = "Never edit files under vendor/. Read src/f0.txt."
		}
		must(t, e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": created.Session, "text": text}, nil))
	}
	if v := e.provider.Violations(); len(v) > 0 {
		t.Fatalf("invalid requests reached the provider: %v", v)
	}
	completed := 0
	for _, n := range e.client.Notifications("alisio/event") {
		var ev struct {
			Type     string
			Summary  string
			Fidelity map[string]struct{ Anchors, Covered, Added int }
		}
		if json.Unmarshal(n.Params, &ev) != nil || ev.Type != "compaction_completed" {
			continue
		}
		completed++
		if f := ev.Fidelity["files"]; f.Anchors == 0 || f.Covered != 0 || f.Added != f.Anchors || !strings.Contains(ev.Summary, "the summary kept files 0/") {
			t.Fatalf("compaction_completed over the wire: %+v", ev)
		}
	}
	if completed < 3 {
		t.Fatalf("%d compactions; the scenario needs several", completed)
	}
	reqs := e.provider.Requests()
	last, _ := json.Marshal(reqs[len(reqs)-1])
	for _, want := range []string{"Never edit files under vendor/", "src/f0.txt", "src/f5.txt", "The user's own words", "Turn 5: read src/f5.txt."} {
		if !strings.Contains(string(last), want) {
			t.Errorf("after %d compactions the last request lacks %q", completed, want)
		}
	}
	v, err := e.store.Transcript(created.Session)
	must(t, err)
	must(t, transcripttest.CheckStructure(v.Messages))
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUndoAndEditCheckpoint: through the daemon, a checkpoint is edited (its document checked against the
// schema, a bad one refused with nothing saved), the edit and then the compaction are undone — the transcript
// exactly as before it, with what was added since — and a third undo says there is nothing left.
func TestUndoAndEditCheckpoint(t *testing.T) {
	var replies []providertest.Reply
	for i := 0; i < 6; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprint("call_", i), Name: "read_file",
			Arguments: `{"path":"big.txt"}`}}}, providertest.Reply{Text: fmt.Sprint("read ", i)})
	}
	e := start(t, &providertest.Script{Replies: replies, Loop: true}, func(c *config.Config) {
		c.Limits.MaxContextChars = 12_000
		c.Compaction.KeepTurns = 1
	})
	must(t, os.WriteFile(filepath.Join(e.ws, "big.txt"), []byte(strings.Repeat(strings.Repeat("w", 49)+"\n", 80)), 0o644))
	e.init(t, nil)
	var created struct{ Session string }
	must(t, e.client.Call(ctx(t), "alisio/newSession", map[string]any{"title": "t"}, &created))
	id := created.Session
	prompt := func(text string) {
		t.Helper()
		must(t, e.client.Call(ctx(t), "alisio/prompt", map[string]any{"session": id, "text": text}, nil))
	}
	prompt("Read big.txt.")
	prompt("Read it again.")
	before, err := e.store.Transcript(id)
	must(t, err)
	must(t, e.client.Call(ctx(t), "alisio/compact", map[string]any{"session": id}, nil))

	var ck struct {
		ID       string
		Editable map[string]any
	}
	must(t, e.client.Call(ctx(t), "alisio/checkpoint", map[string]any{"session": id}, &ck))
	if ck.Editable == nil || ck.Editable["goal"] == nil {
		t.Fatalf("no editable checkpoint: %+v", ck)
	}
	bad := map[string]any{}
	for k, v := range ck.Editable {
		bad[k] = v
	}
	bad["goal"], bad["extra"] = 42, true
	err = e.client.Call(ctx(t), "alisio/setCheckpoint", map[string]any{"session": id, "checkpoint": bad}, nil)
	var je *jsonrpc2.Error
	if !errors.As(err, &je) || !strings.Contains(string(*je.Data), `"kind":"invalidCheckpoint"`) || !strings.Contains(je.Message, "goal") || !strings.Contains(je.Message, "extra") {
		t.Fatalf("a bad checkpoint: %v", err)
	}
	ck.Editable["goal"] = "Ship the parser, edited by the user"
	var edited struct {
		Checkpoint struct{ Goal string }
		Text       string
	}
	must(t, e.client.Call(ctx(t), "alisio/setCheckpoint", map[string]any{"session": id, "checkpoint": ck.Editable}, &edited))
	if edited.Checkpoint.Goal != "Ship the parser, edited by the user" || !strings.Contains(edited.Text, "edited by the user") {
		t.Fatalf("edited: %+v", edited)
	}
	// An edit begun from the checkpoint before that one is refused, naming the one in force now.
	var inForce struct{ ID string }
	must(t, e.client.Call(ctx(t), "alisio/checkpoint", map[string]any{"session": id}, &inForce))
	err = e.client.Call(ctx(t), "alisio/setCheckpoint", map[string]any{"session": id, "checkpoint": ck.Editable, "base": ck.ID}, nil)
	if !errors.As(err, &je) || inForce.ID == ck.ID || string(*je.Data) != `{"kind":"checkpointChanged","checkpoint":"`+inForce.ID+`"}` || !strings.Contains(je.Message, "Nothing was saved") {
		t.Fatalf("an edit of a checkpoint no longer in force: %v (%s)", err, *je.Data)
	}
	compacted, err := e.store.Transcript(id)
	must(t, err)
	prompt("One more.")
	added, err := e.store.Transcript(id)
	must(t, err)
	appended := added.Messages[len(compacted.Messages):] // the turn since the compaction

	var undo struct {
		Kind, Message string
		More          bool
	}
	must(t, e.client.Call(ctx(t), "alisio/undoCompaction", map[string]any{"session": id}, &undo))
	if undo.Kind != "checkpoint edit" || !undo.More || !strings.Contains(undo.Message, "Undo again (Alisio: Undo Compaction / :AlisioUndoCompact)") {
		t.Fatalf("undoing the edit: %+v", undo)
	}
	must(t, e.client.Call(ctx(t), "alisio/undoCompaction", map[string]any{"session": id}, &undo))
	if undo.Kind != "compaction" {
		t.Fatalf("undoing the compaction: %+v", undo)
	}
	now, err := e.store.Transcript(id)
	must(t, err)
	var want, got []string
	for _, m := range append(append([]transcript.Message{}, before.Messages...), appended...) {
		want = append(want, m.ID)
	}
	for _, m := range now.Messages {
		got = append(got, m.ID)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after undoing: %d messages, want the %d before the compaction and the %d since", len(got), len(before.Messages), len(appended))
	}
	must(t, transcripttest.CheckStructure(now.Messages))
	err = e.client.Call(ctx(t), "alisio/undoCompaction", map[string]any{"session": id}, nil)
	if !errors.As(err, &je) || !strings.Contains(string(*je.Data), `"kind":"nothingToUndo"`) {
		t.Fatalf("a third undo: %v", err)
	}
	var sess struct{ Messages []transcript.Message }
	must(t, e.client.Call(ctx(t), "alisio/session", map[string]any{"session": id, "includeCompacted": true}, &sess))
	undone := 0
	for _, m := range sess.Messages {
		if m.Undone {
			undone++
		}
	}
	if undone < 2 {
		t.Fatalf("%d messages marked undone in the history; want the checkpoint and its edit", undone)
	}
}

// TestVSCodeReadsItsSettingNames: a client that says it is VS Code reads every setting a sentence names as
// VS Code's settings name it (alisio.provider.baseURL), here in a failed prompt's error.
func TestVSCodeReadsItsSettingNames(t *testing.T) {
	e := start(t, nil, nil)
	e.client.Experimental = map[string]any{"alisio": map[string]any{"editor": "vscode"}}
	e.init(t, map[string]any{"alisio": map[string]any{"provider": map[string]any{"kind": "openai", "baseURL": "http://127.0.0.1:9/v1", "model": "m"}}})
	err := e.client.Call(ctx(t), "alisio/prompt", map[string]any{"text": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "alisio.provider.baseURL") || strings.Contains(strings.ReplaceAll(err.Error(), "alisio.provider.", ""), "provider.baseURL") {
		t.Fatalf("the unreachable provider's error in VS Code: %v", err)
	}
}
