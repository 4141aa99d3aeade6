package api

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// ErrorKind names what went wrong, for a program to decide on: the editors choose what to offer by it, never
// by the sentence.
type ErrorKind string

// The kinds of failure the daemon and the CLI tell apart.
const (
	// KindContextBudget: the conversation cannot be brought under the hard limit (F1). Chars, Limit.
	KindContextBudget ErrorKind = "contextBudget"
	// KindToolCatalog: the tool catalog leaves the conversation no room in the window. ToolsChars, Window,
	// Sources.
	KindToolCatalog ErrorKind = "toolCatalog"
	// KindUncertainCalls: tool calls with an unknown outcome block the session until recovered. Session, Calls.
	KindUncertainCalls ErrorKind = "uncertainCalls"
	// KindNoProvider: the settings name no provider.
	KindNoProvider ErrorKind = "noProvider"
	// KindModelCall: a model call failed; sending the prompt again resumes the turn.
	KindModelCall ErrorKind = "modelCall"
	// KindSessionNotFound: no session with the ID given. Session.
	KindSessionNotFound ErrorKind = "sessionNotFound"
	// KindStoreLocked: another process holds the session store; KindStoreTooNew: a newer alisio-lsp wrote it.
	KindStoreLocked ErrorKind = "storeLocked"
	KindStoreTooNew ErrorKind = "storeTooNew"
	// KindMemoryNotFound: no memory with the ID given.
	KindMemoryNotFound ErrorKind = "memoryNotFound"
	// KindDiskFull: the disk holding the store is too full to write safely.
	KindDiskFull ErrorKind = "diskFull"
	// KindNothingToUndo: the last turn changed no file that can be undone.
	KindNothingToUndo ErrorKind = "nothingToUndo"
	// KindNothingToCompact: a compaction found nothing it could summarize, or nothing that would shrink the
	// conversation; its compaction_skipped event said why, so an editor need not say it twice.
	KindNothingToCompact ErrorKind = "nothingToCompact"
	// KindInvalidCheckpoint: an edited checkpoint was refused: not JSON, not the checkpoint schema, or too large.
	KindInvalidCheckpoint ErrorKind = "invalidCheckpoint"
	// KindNoCheckpoint: the session has no checkpoint to edit.
	KindNoCheckpoint ErrorKind = "noCheckpoint"
	// KindCheckpointChanged: an edited checkpoint began from one that is no longer in force; nothing was saved.
	KindCheckpointChanged ErrorKind = "checkpointChanged"
	// KindNoSession: no session was named and the workspace has none yet; nothing was tried.
	KindNoSession ErrorKind = "noSession"
	// KindFailed: anything else; the sentence says what.
	KindFailed ErrorKind = "failed"
)

// ErrorData is what a failed request's error carries (the JSON-RPC error's data, the CLI's --json error
// line): its kind, and the figures and names that kind needs.
type ErrorData struct {
	Kind       ErrorKind                  `json:"kind"`
	Session    string                     `json:"session,omitempty"`
	Calls      []string                   `json:"calls,omitempty"`
	Chars      int                        `json:"chars,omitempty"`
	Limit      int                        `json:"limit,omitempty"`
	Window     int                        `json:"window,omitempty"`
	ToolsChars int                        `json:"toolsChars,omitempty"`
	Sources    []compaction.CatalogSource `json:"sources,omitempty"`
	// Checkpoint is the ID of the checkpoint in force, when an edit began from another (checkpointChanged).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// Words are the names of what the user can do, as an edge says them: the editors' commands, or the shell's.
type Words struct {
	// Compact, NewSession and ShowTools name the actions; Recover is a format taking the session's ID;
	// Sessions and Memories name the lists; DataDir where another store is chosen, MaxOutput the
	// summarizer's output budget.
	Compact, NewSession, ShowTools, Recover, Sessions, Memories, DataDir, MaxOutput string
	// UndoCompaction names the undo of a compaction, KeepTurns the setting of the turns a compaction keeps,
	// EditCheckpoint how to reach the checkpoint in force when an edit began from an older one.
	UndoCompaction, KeepTurns, EditCheckpoint string
	// Provider says where the provider is set; Prompt how a message is sent.
	Provider, Prompt string
	// SettingPrefix is what this edge's user types before a setting's name ("alisio." in VS Code's settings).
	SettingPrefix string
}

// settingName is a setting's name in a sentence — a section of the settings and a key of it
// (compaction.keepTurns, limits.maxContextChars) — not already under a prefix.
var settingName = regexp.MustCompile(`(^|[^\w.])((?:compaction|limits|pluginHooks|provider|profiles|plugins|memory|mcpServers|tools|projectRules)\.[A-Za-z][\w.]*[A-Za-z])`)

// Settings writes the settings text names as this edge's user types them: in VS Code,
// "raise limits.maxContextChars" becomes "raise alisio.limits.maxContextChars".
func (w Words) Settings(text string) string {
	if w.SettingPrefix == "" {
		return text
	}
	return settingName.ReplaceAllString(text, "${1}"+w.SettingPrefix+"${2}")
}

// ErrNoSession: a request that names no session found none in the workspace (it works on the most recent one).
var ErrNoSession = errors.New("this workspace has no session yet")

// EditorWords are the daemon's words: the commands of VS Code and of Neovim.
func EditorWords() Words {
	return Words{Compact: "Alisio: Compact / :AlisioCompact", NewSession: "Alisio: New Session / :AlisioNew",
		ShowTools: "Alisio: Show Tools / :AlisioTools", Recover: "Alisio: Recover Uncertain Tool Calls / :AlisioRecover",
		Sessions: "Alisio: Switch Session / :AlisioSessions", Memories: "alisio-lsp memories list", DataDir: "the alisio.dataDir setting",
		MaxOutput: "the alisio.compaction.maxOutputTokens setting", UndoCompaction: "Alisio: Undo Compaction / :AlisioUndoCompact",
		EditCheckpoint: "Alisio: Edit Checkpoint / :AlisioEditCheckpoint opens the one in force, to carry your change over to",
		KeepTurns:      "the alisio.compaction.keepTurns setting / settings = { compaction = { keepTurns = … } }",
		Provider: "run Alisio: Set Up Provider (VS Code; it writes alisio.provider.kind, alisio.provider.baseURL and alisio.provider.model), " +
			"or in Neovim give setup() settings = { provider = { kind = …, baseURL = …, model = … } }",
		Prompt: "Alisio: Prompt in VS Code, :AlisioPrompt in Neovim"}
}

// The editors a client can say it is (initialize: capabilities.experimental.alisio.editor), for WordsFor.
const (
	EditorVSCode = "vscode"
	EditorNeovim = "neovim"
	// EditorTerminal is `alisio-lsp chat`, whose user types slash commands.
	EditorTerminal = "terminal"
)

// WordsFor are the words of editor (EditorVSCode, EditorNeovim): its commands and the names its user types in
// its settings; for another client, EditorWords (both editors').
func WordsFor(editor string) Words {
	switch editor {
	case EditorVSCode:
		return Words{Compact: "Alisio: Compact", NewSession: "Alisio: New Session", ShowTools: "Alisio: Show Tools",
			Recover: "Alisio: Recover Uncertain Tool Calls", Sessions: "Alisio: Switch Session", Memories: "alisio-lsp memories list",
			DataDir: "the alisio.dataDir setting", MaxOutput: "the alisio.compaction.maxOutputTokens setting",
			UndoCompaction: "Alisio: Undo Compaction", KeepTurns: "the alisio.compaction.keepTurns setting",
			EditCheckpoint: "copy your change, then File: Revert File shows the one in force, to carry it over to",
			Provider:       "run Alisio: Set Up Provider (it writes the alisio.provider.kind, alisio.provider.baseURL and alisio.provider.model settings and checks that the provider answers)",
			Prompt:         "Alisio: Prompt, or @alisio in the chat", SettingPrefix: "alisio."}
	case EditorTerminal:
		return Words{Compact: "/compact", NewSession: "/new", ShowTools: "/mcps; mcpServers.NAME.disabled in the config", Recover: "/recover acknowledge",
			Sessions: "/sessions", Memories: "alisio-lsp memories list", DataDir: "--data-dir",
			MaxOutput: "/settings compaction.maxOutputTokens N", UndoCompaction: "/undo", KeepTurns: "/settings compaction.keepTurns N",
			EditCheckpoint: "/checkpoint shows the one in force; /checkpoint edit opens your edit again, and saving it then replaces that one",
			Provider:       "set provider.kind, provider.baseURL and provider.model in the config file that --config names (README, Configuration)",
			Prompt:         "type it below"}
	case EditorNeovim:
		return Words{Compact: ":AlisioCompact", NewSession: ":AlisioNew", ShowTools: ":AlisioTools", Recover: ":AlisioRecover",
			Sessions: ":AlisioSessions", Memories: "alisio-lsp memories list", DataDir: "settings = { dataDir = … } in setup()",
			MaxOutput: "settings = { compaction = { maxOutputTokens = … } } in setup()", UndoCompaction: ":AlisioUndoCompact",
			EditCheckpoint: ":w FILE keeps a copy of it, then :e! shows the one in force, to carry your change over to",
			KeepTurns:      "settings = { compaction = { keepTurns = … } } in setup()",
			Provider:       "give setup() settings = { provider = { kind = 'openai', baseURL = …, model = … } } (:checkhealth alisio checks that it answers)",
			Prompt:         ":AlisioPrompt, or :Alisio for the chat"}
	}
	return EditorWords()
}

// ShellWords are the CLI's words: its commands. Those that run as printed (complete, or completed with the
// session's ID) begin with cli ("alisio-lsp", or with the --data-dir and --config it was given), so that they
// work when pasted.
func ShellWords(cli string) Words {
	return Words{Compact: "alisio-lsp compact SESSION", NewSession: "alisio-lsp prompt --new TEXT",
		ShowTools: "alisio-lsp tools; mcpServers.NAME.disabled in the config", Recover: cli + " sessions recover %s --acknowledge",
		Sessions: cli + " sessions list", Memories: cli + " memories list", DataDir: "--data-dir",
		MaxOutput: "compaction.maxOutputTokens in the config", UndoCompaction: cli + " compact %s --undo",
		EditCheckpoint: cli + " checkpoint SESSION prints the one in force, to carry your change over to",
		KeepTurns:      "compaction.keepTurns in the config",
		Provider:       "set provider.kind, provider.baseURL and provider.model in the config file that --config names (README, Configuration)",
		Prompt:         "alisio-lsp prompt TEXT, or alisio-lsp chat"}
}

// Explain returns what err carries for a program and the sentence a user reads, naming what they can do in
// words. Errors of the core say what happened; the way out is added here, once for every edge.
func Explain(err error, w Words) (ErrorData, string) {
	data, sentence := explain(err, w)
	return data, w.Settings(sentence)
}

// explain is Explain before the settings are named in w's words.
func explain(err error, w Words) (ErrorData, string) {
	msg := err.Error()
	var (
		budget    *compaction.BudgetError
		catalog   *compaction.CatalogError
		uncertain *compaction.UncertainError
		calls     *agent.UncertainCallsError
		changed   *agent.CheckpointChangedError
	)
	switch {
	case errors.As(err, &budget):
		return ErrorData{Kind: KindContextBudget, Chars: budget.Chars, Limit: budget.Limit, Window: budget.Window, ToolsChars: budget.ToolsChars},
			msg + fmt.Sprintf(" To continue: compact manually (%s), trim large tool outputs, start a new session (%s), or turn off MCP servers you do not need (%s).",
				w.Compact, w.NewSession, w.ShowTools)
	case errors.As(err, &catalog):
		return ErrorData{Kind: KindToolCatalog, Chars: catalog.Chars, Window: catalog.Window, ToolsChars: catalog.ToolsChars, Sources: catalog.Sources},
			msg + fmt.Sprintf(" Turn off the MCP servers you do not need (%s), or use a model with a larger window. Nothing was sent and nothing is lost.", w.ShowTools)
	case errors.As(err, &calls):
		var ids []string
		for _, c := range calls.Calls {
			ids = append(ids, c.ID)
		}
		return ErrorData{Kind: KindUncertainCalls, Session: calls.Session, Calls: ids},
			msg + " Record that their outcome is unknown (" + recoverWords(w, calls.Session) + "), then continue."
	case errors.As(err, &uncertain):
		session := uncertain.Session
		if session == "" {
			session = "SESSION"
		}
		return ErrorData{Kind: KindUncertainCalls, Session: uncertain.Session, Calls: uncertain.CallIDs},
			msg + ": record that their outcome is unknown first (" + recoverWords(w, session) + ")."
	case errors.Is(err, agent.ErrNoProvider):
		return ErrorData{Kind: KindNoProvider}, msg + ": " + w.Provider +
			". To try alisio without an API key, run alisio-testprovider and point the base URL at it."
	case errors.Is(err, agent.ErrModelCall), errors.Is(err, agent.ErrProviderSilent):
		return ErrorData{Kind: KindModelCall}, msg
	case errors.Is(err, storage.ErrNotFound):
		return ErrorData{Kind: KindSessionNotFound}, msg + " (" + w.Sessions + " shows the sessions)"
	case errors.Is(err, storage.ErrLocked):
		return ErrorData{Kind: KindStoreLocked}, msg + ", or use another store (" + w.DataDir + ")"
	case errors.Is(err, storage.ErrFormatTooNew):
		return ErrorData{Kind: KindStoreTooNew}, msg + ", or use another store (" + w.DataDir + ")"
	case errors.Is(err, storage.ErrNoMemory):
		return ErrorData{Kind: KindMemoryNotFound}, msg + " (" + w.Memories + " lists them)"
	case errors.Is(err, storage.ErrDiskFull):
		return ErrorData{Kind: KindDiskFull}, msg
	case errors.Is(err, agent.ErrNothingToUndo), errors.Is(err, storage.ErrNothingToUndo):
		return ErrorData{Kind: KindNothingToUndo}, msg
	case errors.Is(err, compaction.ErrInvalidCheckpoint):
		return ErrorData{Kind: KindInvalidCheckpoint}, msg + ". Nothing was saved: correct it and save again."
	case errors.As(err, &changed):
		return ErrorData{Kind: KindCheckpointChanged, Checkpoint: changed.InForce}, msg + ". Nothing was saved, and your edit is kept: " + w.EditCheckpoint + "."
	case errors.Is(err, agent.ErrNoCheckpoint):
		return ErrorData{Kind: KindNoCheckpoint}, msg + " (a compaction writes one: " + w.Compact + ")"
	case errors.Is(err, ErrNoSession):
		return ErrorData{Kind: KindNoSession}, msg + ": send a message first (" + w.Prompt + ")"
	case errors.Is(err, compaction.ErrNothingToSummarize), errors.Is(err, compaction.ErrNoGain):
		return ErrorData{Kind: KindNothingToCompact}, msg
	}
	return ErrorData{Kind: KindFailed}, msg
}

// recoverWords is w.Recover for session.
func recoverWords(w Words, session string) string {
	if strings.Contains(w.Recover, "%s") {
		return fmt.Sprintf(w.Recover, session)
	}
	return w.Recover
}
