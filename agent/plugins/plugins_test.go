package plugins

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// goHook is a Go plugin whose hooks do what the test asks: hang, panic or answer.
type goHook struct {
	run func(ctx context.Context) error
}

func (h goHook) Name() string { return "go-hook" }
func (h goHook) BeforeCompact(ctx context.Context, _ compaction.HookInput) (compaction.BeforeResult, error) {
	return compaction.BeforeResult{}, h.run(ctx)
}
func (h goHook) AfterCompact(ctx context.Context, _ compaction.HookInput) (compaction.AfterResult, error) {
	return compaction.AfterResult{}, h.run(ctx)
}

func TestGuard_HangAndPanicBecomeErrors(t *testing.T) {
	hang := Guard(goHook{run: func(context.Context) error { select {} }}, 50*time.Millisecond)
	if _, err := hang.BeforeCompact(context.Background(), compaction.HookInput{}); err == nil || !strings.Contains(err.Error(), "pluginHooks.timeoutMs (50 ms)") {
		t.Fatalf("a hook that ignores its deadline: %v", err)
	}
	boom := Guard(goHook{run: func(context.Context) error { panic("nil map") }}, time.Second)
	if _, err := boom.AfterCompact(context.Background(), compaction.HookInput{}); err == nil || !strings.Contains(err.Error(), "afterCompact panicked: nil map") {
		t.Fatalf("a panicking hook: %v", err)
	}
	ok := Guard(goHook{run: func(context.Context) error { return nil }}, time.Second)
	if _, err := ok.BeforeCompact(context.Background(), compaction.HookInput{}); err != nil {
		t.Fatal(err)
	}
}

// script writes an executable shell script and returns its path.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExternal_Protocol runs a hook program: it reads the request on stdin, and its answer, invalid output,
// failure, slowness or absence each give what the user needs to know.
func TestExternal_Protocol(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	dir := t.TempDir()
	record := filepath.Join(dir, "stdin.json")
	echo := script(t, `cat > "$RECORD"; env > "$RECORD.env"; printf '{"instructions":"x","outputFields":{"q":{"type":"string"}}}'`)
	e := Guard(&External{Config: config.Plugin{Name: "echo", Command: echo, Env: map[string]string{"RECORD": record}}}, 5*time.Second)
	res, err := e.BeforeCompact(context.Background(), compaction.HookInput{Session: "s1", Workspace: dir, Reason: compaction.ReasonManual, Focus: "the parser"})
	if err != nil || res.Instructions != "x" || string(res.OutputFields["q"]) != `{"type":"string"}` {
		t.Fatalf("%+v %v", res, err)
	}
	var got map[string]any
	raw, _ := os.ReadFile(record)
	if err := json.Unmarshal(raw, &got); err != nil || got["v"] != float64(1) || got["hook"] != "beforeCompact" || got["session"] != "s1" ||
		got["workspace"] != dir || got["reason"] != "manual" || got["focus"] != "the parser" {
		t.Fatalf("stdin %s (%v)", raw, err)
	}
	if env, _ := os.ReadFile(record + ".env"); strings.Contains(string(env), "sk-test-secret") || !strings.Contains(string(env), "RECORD=") {
		t.Fatalf("the hook's environment: the API key must not reach it, its own env must:\n%s", env)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"invalid JSON", `echo 'not json'`, "invalid JSON"},
		{"unknown field", `echo '{"bogus":1}'`, "invalid JSON"},
		{"fails", `echo 'cannot reach the wiki' >&2; exit 3`, "exit status 3 (stderr: cannot reach the wiki)"},
		{"hangs", `sleep 10`, "pluginHooks.timeoutMs (200 ms)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Guard(&External{Config: config.Plugin{Name: "bad", Command: script(t, tc.body)}}, 200*time.Millisecond)
			start := time.Now()
			_, err := p.AfterCompact(context.Background(), compaction.HookInput{Workspace: dir})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want %q", err, tc.want)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatal("a hung hook held the compaction")
			}
		})
	}
	missing := &External{Config: config.Plugin{Name: "gone", Command: "alisio-no-such-hook"}}
	if _, err := missing.BeforeCompact(context.Background(), compaction.HookInput{Workspace: dir}); err == nil || !strings.Contains(err.Error(), `command "alisio-no-such-hook" not found`) {
		t.Fatalf("missing command: %v", err)
	}
}

// TestExternal_DocumentedExample runs docs/plugins/open-questions.py, the example docs/plugins.md gives.
func TestExternal_DocumentedExample(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed (.ci/run installs it)")
	}
	p := &External{Config: config.Plugin{Name: "open-questions", Command: "python3", Args: []string{"../../docs/plugins/open-questions.py"}}}
	before, err := p.BeforeCompact(context.Background(), compaction.HookInput{})
	if err != nil || before.OutputFields["openQuestions"] == nil {
		t.Fatalf("%+v %v", before, err)
	}
	after, err := p.AfterCompact(context.Background(), compaction.HookInput{Fields: map[string]json.RawMessage{"openQuestions": json.RawMessage(`["is the lexer thread-safe?"]`)}})
	if err != nil || !strings.Contains(after.InjectContext, "- is the lexer thread-safe?") || after.Report.Summary != "1 open question(s) kept" {
		t.Fatalf("%+v %v", after, err)
	}
}
