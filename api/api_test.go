package api_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// jsonFields are the JSON names of t's fields, embedded structs' flattened, as encoding/json writes them.
func jsonFields(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && name == "":
			for _, n := range jsonFields(f.Type) {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		case name == "":
			out = append(out, f.Name)
		default:
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

var (
	tsInterface = regexp.MustCompile(`(?ms)^export interface (\w+) \{\n(.*?)^\}`)
	tsField     = regexp.MustCompile(`(?m)^  (\w+)\??:`)
)

// TestTypeScriptMirror: every interface of editors/vscode/src/protocol.ts has exactly the JSON fields of its
// Go struct, and every Go type the extension reads has its interface there.
func TestTypeScriptMirror(t *testing.T) {
	mirror := map[string]reflect.Type{
		"Status":               reflect.TypeFor[api.Status](),
		"AlisioEvent":          reflect.TypeFor[api.Event](),
		"ErrorData":            reflect.TypeFor[api.ErrorData](),
		"ContextPart":          reflect.TypeFor[agent.ContextPart](),
		"ContextResult":        reflect.TypeFor[api.ContextResult](),
		"ToolSource":           reflect.TypeFor[tools.SourceSummary](),
		"ToolsDescription":     reflect.TypeFor[api.ToolsResult](),
		"PromptResult":         reflect.TypeFor[api.PromptResult](),
		"SessionSummary":       reflect.TypeFor[api.SessionSummary](),
		"SessionsResult":       reflect.TypeFor[api.SessionsResult](),
		"NewSessionResult":     reflect.TypeFor[api.NewSessionResult](),
		"CheckpointResult":     reflect.TypeFor[api.CheckpointResult](),
		"RecoverResult":        reflect.TypeFor[api.RecoverResult](),
		"CallOutcome":          reflect.TypeFor[api.CallOutcome](),
		"Notice":               reflect.TypeFor[api.Notice](),
		"ApproveParams":        reflect.TypeFor[api.ApproveParams](),
		"UndoTurnResult":       reflect.TypeFor[api.UndoTurnResult](),
		"UsageTotals":          reflect.TypeFor[storage.UsageTotals](),
		"CacheMeter":           reflect.TypeFor[api.CacheMeter](),
		"ProjectRules":         reflect.TypeFor[agent.ProjectRules](),
		"Coverage":             reflect.TypeFor[compaction.Coverage](),
		"UndoCompactionResult": reflect.TypeFor[api.UndoCompactionResult](),
	}
	src, err := os.ReadFile(filepath.Join("..", "editors", "vscode", "src", "protocol.ts"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range tsInterface.FindAllStringSubmatch(string(src), -1) {
		name := m[1]
		goType, ok := mirror[name]
		if !ok {
			t.Errorf("protocol.ts: interface %s mirrors no Go type this test knows: add it to the test", name)
			continue
		}
		seen[name] = true
		var ts []string
		for _, f := range tsField.FindAllStringSubmatch(m[2], -1) {
			ts = append(ts, f[1])
		}
		slices.Sort(ts)
		if want := jsonFields(goType); !slices.Equal(ts, want) {
			t.Errorf("protocol.ts: %s has fields %v; %s encodes %v", name, ts, goType, want)
		}
	}
	for name := range mirror {
		if !seen[name] {
			t.Errorf("protocol.ts has no interface %s", name)
		}
	}
	for _, st := range []string{string(api.CallDone), string(api.CallFailed), string(api.CallUncertain), string(api.CallRunning),
		string(api.NoticeUncertainCalls), string(api.NoticePartialCheckpoint), string(api.NoticeProjectRules)} {
		if !strings.Contains(string(src), fmt.Sprintf("'%s'", st)) {
			t.Errorf("protocol.ts lacks the value %q", st)
		}
	}
	// The kinds the extension knows are the kinds the daemon sends.
	for _, k := range []api.ErrorKind{api.KindContextBudget, api.KindToolCatalog, api.KindUncertainCalls, api.KindNoProvider, api.KindModelCall,
		api.KindSessionNotFound, api.KindStoreLocked, api.KindStoreTooNew, api.KindMemoryNotFound, api.KindDiskFull, api.KindNothingToUndo, api.KindNothingToCompact, api.KindFailed} {
		if !strings.Contains(string(src), fmt.Sprintf("'%s'", k)) {
			t.Errorf("protocol.ts's ErrorKind lacks %q", k)
		}
	}
}

// TestExplain: each error of the core gets its kind and figures, and a sentence that names what to do in the
// words of the edge showing it — the editors' commands, or the shell's — and never the other edge's.
func TestExplain(t *testing.T) {
	calls := &agent.UncertainCallsError{Session: "s1", Calls: []transcript.ToolCall{{ID: "call_1", Name: "run_command"}}}
	for _, tc := range []struct {
		err    error
		kind   api.ErrorKind
		editor string
		shell  string
	}{
		{&compaction.BudgetError{Chars: 12_000, Limit: 10_000, Compaction: compaction.CompactionRanNotEnough}, api.KindContextBudget, ":AlisioCompact", "alisio-lsp compact SESSION"},
		{&compaction.CatalogError{ToolsChars: 90_000, Window: 32_000, Reserve: 4096}, api.KindToolCatalog, ":AlisioTools", "alisio-lsp tools"},
		{calls, api.KindUncertainCalls, ":AlisioRecover", "alisio-lsp sessions recover s1 --acknowledge"},
		{&compaction.UncertainError{CallIDs: []string{"call_1"}}, api.KindUncertainCalls, ":AlisioRecover", "alisio-lsp sessions recover SESSION --acknowledge"},
		{fmt.Errorf("reading: %w: s9", storage.ErrNotFound), api.KindSessionNotFound, ":AlisioSessions", "alisio-lsp sessions list"},
		{agent.ErrNoProvider, api.KindNoProvider, "", ""},
		{fmt.Errorf("compacting s1: %w", compaction.ErrNothingToSummarize), api.KindNothingToCompact, "", ""},
		{fmt.Errorf("%w: the checkpoint is not smaller", compaction.ErrNoGain), api.KindNothingToCompact, "", ""},
		{errors.New("something else"), api.KindFailed, "", ""},
	} {
		data, editor := api.Explain(tc.err, api.EditorWords())
		_, shell := api.Explain(tc.err, api.ShellWords("alisio-lsp"))
		if data.Kind != tc.kind || !strings.Contains(editor, tc.editor) || !strings.Contains(shell, tc.shell) {
			t.Errorf("%T: kind %s\n editor: %s\n shell: %s", tc.err, data.Kind, editor, shell)
		}
		if strings.Contains(editor, "alisio-lsp compact") || strings.Contains(shell, ":Alisio") {
			t.Errorf("%T: an edge names the other's commands:\n editor: %s\n shell: %s", tc.err, editor, shell)
		}
	}
	data, _ := api.Explain(calls, api.EditorWords())
	if data.Session != "s1" || !slices.Equal(data.Calls, []string{"call_1"}) {
		t.Errorf("uncertain calls' data: %+v", data)
	}
}

// TestSummary: the sentence of each compaction event, made once for the editors and the CLI.
func TestSummary(t *testing.T) {
	for _, tc := range []struct {
		e    compaction.Event
		want string
	}{
		{compaction.Event{Type: compaction.EventCompleted, BeforeChars: 412_000, AfterChars: 31_000, BeforeTokens: 104_500, AfterTokens: 8_250, SpanMessages: 118,
			SpanChars: 390_000, CheckpointChars: 9_100, Plugins: []compaction.PluginReport{{Plugin: "memory", Summary: "saved 2 new memories"}}},
			"compacted 118 messages, 390k → 9.1k chars; the request is now 8.2k tokens (was 105k); memory: saved 2 new memories"},
		// A later compaction folds the earlier checkpoint in: said, since the chat's boundary counts the messages it held.
		{compaction.Event{Type: compaction.EventCompleted, BeforeChars: 9_000, AfterChars: 3_000, SpanMessages: 11, SpanCheckpoint: true, SpanChars: 4_400,
			CheckpointChars: 1_200}, "compacted the earlier checkpoint and 10 messages after it, 4.4k → 1.2k chars; instructions and conversation are now 3k chars (was 9k)"},
		{compaction.Event{Type: compaction.EventCompleted, BeforeChars: 9_000, AfterChars: 3_000, SpanMessages: 1, SpanChars: 4_400, CheckpointChars: 1_200},
			"compacted 1 message, 4.4k → 1.2k chars; instructions and conversation are now 3k chars (was 9k)"},
		{compaction.Event{Type: compaction.EventStarted, Reason: compaction.ReasonAuto, Rule: compaction.RuleWindow, SpanMessages: 40},
			"compacting 40 messages (automatic: the request passed the window's compaction point)…"},
		// The start counts as the end does: the earlier checkpoint named, not counted among the messages.
		{compaction.Event{Type: compaction.EventStarted, Reason: compaction.ReasonManual, SpanMessages: 11, SpanCheckpoint: true},
			"compacting the earlier checkpoint and 10 messages after it (asked for)…"},
		{compaction.Event{Type: compaction.EventReduced, Messages: 3}, "3 large messages trimmed to fit the budget"},
		{compaction.Event{Type: compaction.EventFailed, Error: "summarizer: timeout"}, "compaction failed: summarizer: timeout"},
		{compaction.Event{Type: compaction.EventFailed, Cause: compaction.CauseStopped, Message: "stopped before it finished; the session is as it was", Error: "context canceled"}, "compaction stopped before it finished; the session is as it was"},
		{compaction.Event{Type: compaction.EventSkipped, Message: "nothing to summarize"}, "compaction skipped: nothing to summarize"},
	} {
		if got := api.Summary(tc.e); got != tc.want {
			t.Errorf("%s: %q; want %q", tc.e.Type, got, tc.want)
		}
	}
	if got := api.Human(1_250_000) + " " + api.Human(31_400) + " " + api.Human(950); got != "1.2M 31k 950" {
		t.Errorf("Human: %s", got)
	}
}

// TestWordsFor: an editor that says which it is reads its own commands and settings only; another client
// reads both editors'.
func TestWordsFor(t *testing.T) {
	errs := []error{agent.ErrNoProvider, &compaction.BudgetError{Chars: 12_000, Limit: 10_000}, fmt.Errorf("x: %w", storage.ErrLocked),
		&agent.UncertainCallsError{Session: "s1", Calls: []transcript.ToolCall{{ID: "c1"}}}}
	for _, err := range errs {
		_, vscode := api.Explain(err, api.WordsFor(api.EditorVSCode))
		_, nvim := api.Explain(err, api.WordsFor(api.EditorNeovim))
		_, both := api.Explain(err, api.WordsFor(""))
		if strings.Contains(vscode, ":Alisio") || strings.Contains(vscode, "Neovim") || strings.Contains(vscode, "setup()") ||
			strings.Contains(nvim, "Alisio: ") || strings.Contains(nvim, "VS Code") || both != func() string { _, s := api.Explain(err, api.EditorWords()); return s }() {
			t.Errorf("%T:\n vscode: %s\n neovim: %s\n other: %s", err, vscode, nvim, both)
		}
	}
}

// TestWordsSettings: VS Code's user reads a setting under the name its settings give it (alisio.…); the other
// edges read it as their config files spell it; a name already prefixed, or not a setting, is left alone.
func TestWordsSettings(t *testing.T) {
	text := "compacts first: the session is past limits.maxContextChars's compaction point; check provider.baseURL, " +
		"the alisio.compaction.keepTurns setting, api.openai.com and compaction.maxOutputTokens."
	want := "compacts first: the session is past alisio.limits.maxContextChars's compaction point; check alisio.provider.baseURL, " +
		"the alisio.compaction.keepTurns setting, api.openai.com and alisio.compaction.maxOutputTokens."
	if got := api.WordsFor(api.EditorVSCode).Settings(text); got != want {
		t.Errorf("VS Code:\n%s\nwant\n%s", got, want)
	}
	for _, editor := range []string{api.EditorNeovim, api.EditorTerminal, ""} {
		if got := api.WordsFor(editor).Settings(text); got != text {
			t.Errorf("%q: %s", editor, got)
		}
	}
	_, sentence := api.Explain(fmt.Errorf("could not reach the provider: check provider.baseURL"), api.WordsFor(api.EditorVSCode))
	if !strings.Contains(sentence, "check alisio.provider.baseURL") {
		t.Errorf("an error in VS Code's words: %s", sentence)
	}
}
