package compaction

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// The kinds of anchor a Ledger holds: what a checkpoint must not lose, found by code in the span it replaces.
const (
	KindFiles       = "files"
	KindConstraints = "constraints"
	KindCommands    = "commands"
	KindErrors      = "errors"
)

// Ledger is what the replaced span did and what its user asked, extracted by code rather than by the model:
// the files it read, wrote or edited (from tool calls), the commands it ran with their exit status, the error
// lines of its failed tool results, and the user's constraint sentences. A checkpoint is measured against it
// (Measure) and completed from it (Merge) before it is stored.
type Ledger struct {
	Files       []FileUse
	Commands    []CommandRun
	Errors      []string
	Constraints []string
	// Extra are the anchors of kinds plugins add (kind → anchors), checked in the checkpoint's text.
	Extra map[string][]string
}

// FileUse is a file a tool call used and how: read, written or edited.
type FileUse struct{ Path, Use string }

// CommandRun is a command a tool call ran and how it ended ("exit 0", "exit 2", "failed", "ok").
type CommandRun struct{ Command, Status string }

// Coverage is how many of one kind's anchors the summarizer's checkpoint held (Covered of Anchors) and how
// many the merge then added (Added).
type Coverage struct {
	Anchors int `json:"anchors"`
	Covered int `json:"covered"`
	Added   int `json:"added,omitempty"`
}

// Fidelity is the coverage of each kind of anchor (compaction_completed's "fidelity", stored with the
// checkpoint).
type Fidelity map[string]Coverage

// constraintPattern marks a user sentence as a constraint: an obligation, a prohibition or a rule, in English
// or Spanish (the product document's language).
var constraintPattern = regexp.MustCompile(`(?i)\b(must|never|always|do not|don't|dont|does not|doesn't|should not|shouldn't|avoid|make sure|only|nunca|jamás|siempre|no|debe|debes|deben|hay que|evita|evitar|asegúrate|sólo|solo|prohibido)\b`)

// errorLinePattern finds the lines of a failed tool result worth keeping.
var errorLinePattern = regexp.MustCompile(`(?i)\b(error|errors|fail|failed|failure|panic|exception|traceback|fatal|denied|not found|no such)\b`)

// exitPattern reads a command result's exit status
// ("exit code 1", mini-swe-agent's "<returncode>1</returncode>").
var exitPattern = regexp.MustCompile(`(?i)(?:exit (?:code|status)[: ]*|<returncode>)(-?\d+)`)

// patchFilePattern finds the files of an apply_patch-style patch.
var patchFilePattern = regexp.MustCompile(`(?m)^\*\*\* (?:Update|Add|Delete) File: (.+)$`)

// Bounds of one anchor's text and of the error lines taken from one result.
const (
	anchorCap       = 300
	errorLinesEach  = 3
	commandMatchLen = 80
)

// IsConstraint says whether a sentence of the user's is a constraint the ledger keeps.
func IsConstraint(sentence string) bool { return constraintPattern.MatchString(sentence) }

// Extract builds the ledger of span. A previous checkpoint at its start contributes its instructions and
// files, which a compaction of it must keep.
func Extract(span []transcript.Message) Ledger {
	var l Ledger
	files, constraints := map[string]int{}, map[string]bool{}
	addFile := func(path, use string) {
		if path = strings.TrimSpace(path); path == "" || path == "." {
			return
		}
		if i, ok := files[path]; ok {
			if useRank(use) > useRank(l.Files[i].Use) {
				l.Files[i].Use = use
			}
			return
		}
		files[path] = len(l.Files)
		l.Files = append(l.Files, FileUse{path, use})
	}
	addConstraint := func(s string) {
		if s = clipRunes(strings.TrimSpace(s), anchorCap); s != "" && !constraints[normalize(s)] {
			constraints[normalize(s)] = true
			l.Constraints = append(l.Constraints, s)
		}
	}
	if len(span) > 0 && span[0].Summary {
		if prev, err := ParseStructured(span[0].Structured); err == nil {
			for _, s := range prev.Instructions {
				addConstraint(s)
			}
			for _, f := range prev.RelevantFiles {
				addFile(f.Path, f.Reason)
			}
		}
		span = span[1:]
	}
	results := resultsByCall(span)
	for i := range span {
		m := &span[i]
		switch {
		case m.Role == transcript.RoleUser && !m.Summary:
			for _, s := range sentences(m.Text) {
				if IsConstraint(s) {
					addConstraint(s)
				}
			}
		case m.Role == transcript.RoleAssistant:
			for _, c := range m.ToolCalls {
				res, answered := results[c.ID]
				if use := fileUse(c.Name); use != "" && !(answered && res.IsError && use == "read") {
					for _, p := range callFiles(c.Arguments) {
						addFile(p, use)
					}
				}
				if cmd := callCommand(c.Arguments); cmd != "" {
					l.Commands = append(l.Commands, CommandRun{clipRunes(cmd, anchorCap), commandStatus(res, answered)})
				}
				if answered && failed(res) {
					l.Errors = append(l.Errors, errorLines(res.Text)...)
				}
			}
		}
	}
	return l
}

// resultsByCall maps each call ID to the tool message that answers it (the latest, when an ID is reused).
func resultsByCall(span []transcript.Message) map[string]*transcript.Message {
	out := map[string]*transcript.Message{}
	for i := range span {
		if m := &span[i]; m.Role == transcript.RoleTool && m.ToolCallID != "" {
			out[m.ToolCallID] = m
		}
	}
	return out
}

// fileUse classifies a tool by its name: "read", "written", "edited", or "" for a tool that uses no file
// (directory listings and searches name folders and patterns, not files).
func fileUse(tool string) string {
	n := strings.ToLower(tool)
	switch {
	case strings.Contains(n, "list") || strings.Contains(n, "search") || strings.Contains(n, "grep") || strings.Contains(n, "glob") || n == "ls":
		return ""
	case strings.Contains(n, "edit") || strings.Contains(n, "patch") || strings.Contains(n, "replace"):
		return "edited"
	case strings.Contains(n, "write") || strings.Contains(n, "create"):
		return "written"
	case strings.Contains(n, "read") || strings.Contains(n, "view") || strings.Contains(n, "open") || strings.Contains(n, "cat"):
		return "read"
	}
	return ""
}

// useRank orders the uses, so that a file both read and edited is listed as edited.
func useRank(use string) int {
	switch use {
	case "edited":
		return 3
	case "written":
		return 2
	case "read":
		return 1
	}
	return 0
}

// callFiles are the file paths of a call's arguments: the values of the usual path keys, or the files a patch
// names. Unlike the offline summarizer's guesses, nothing is read out of free text.
func callFiles(args string) []string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return nil
	}
	var out []string
	for _, k := range pathKeys {
		var s string
		if v := obj[k]; len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	for _, k := range []string{"patch", "input"} {
		var s string
		if v := obj[k]; len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil {
			for _, m := range patchFilePattern.FindAllStringSubmatch(s, -1) {
				out = append(out, strings.TrimSpace(m[1]))
			}
		}
	}
	return out
}

// callCommand is the command line a call ran ("command" or "cmd", a string or an argument list), or "".
func callCommand(args string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil {
		return ""
	}
	for _, k := range []string{"command", "cmd"} {
		v := obj[k]
		var s string
		var list []string
		switch {
		case len(v) == 0:
		case json.Unmarshal(v, &s) == nil:
			return strings.TrimSpace(s)
		case json.Unmarshal(v, &list) == nil:
			if len(list) >= 3 && (list[0] == "bash" || list[0] == "sh" || list[0] == "zsh") && list[1] == "-lc" || len(list) == 3 && list[1] == "-c" {
				return strings.TrimSpace(list[2])
			}
			return strings.TrimSpace(strings.Join(list, " "))
		}
	}
	return ""
}

// commandStatus says how a command ended, from its result.
func commandStatus(res *transcript.Message, answered bool) string {
	if !answered {
		return "no result"
	}
	if m := exitPattern.FindStringSubmatch(res.Text); m != nil {
		return "exit " + m[1]
	}
	if res.IsError {
		return "failed"
	}
	return "ok"
}

// failed says whether a tool result reports a failure: marked as an error, or a non-zero exit status.
func failed(res *transcript.Message) bool {
	if res.IsError {
		return true
	}
	m := exitPattern.FindStringSubmatch(res.Text)
	return m != nil && m[1] != "0"
}

// errorLines are the first lines of a failed result that name an error.
func errorLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && errorLinePattern.MatchString(line) {
			out = append(out, clipRunes(line, anchorCap))
			if len(out) == errorLinesEach {
				break
			}
		}
	}
	return out
}

// normalize folds case and spacing, and drops closing punctuation, for comparing an anchor with a text.
func normalize(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(s, ".!?;:… ")
}

// mentions says whether the normalized text holds anchor: the whole of it, or for a long anchor its first
// commandMatchLen chars.
func mentions(text, anchor string) bool {
	a := normalize(anchor)
	if r := []rune(a); len(r) > commandMatchLen {
		a = string(r[:commandMatchLen])
	}
	return a != "" && strings.Contains(text, a)
}

// Measure is the share of each kind's anchors that cp covers: a file in its relevant files (the list a later
// step reads files from, so a file named only in passing is not covered),
// a constraint quoted in it, a command or an error line (its first 80 chars) written in it, a plugin's anchor
// in its text.
func (l Ledger) Measure(cp *Checkpoint) Fidelity {
	text := normalize(cp.Render())
	f := Fidelity{}
	count := func(kind string, anchors []string, covered func(string) bool) {
		if len(anchors) == 0 {
			return
		}
		c := Coverage{Anchors: len(anchors)}
		for _, a := range anchors {
			if covered(a) {
				c.Covered++
			}
		}
		f[kind] = c
	}
	inText := func(a string) bool { return mentions(text, a) }
	var paths, commands []string
	for _, u := range l.Files {
		paths = append(paths, u.Path)
	}
	for _, c := range l.Commands {
		commands = append(commands, c.Command)
	}
	count(KindFiles, paths, func(p string) bool { return hasFile(cp.RelevantFiles, p) })
	count(KindConstraints, l.Constraints, inText)
	count(KindCommands, commands, inText)
	count(KindErrors, l.Errors, inText)
	for _, kind := range sortedKeys(l.Extra) {
		count(kind, l.Extra[kind], inText)
	}
	return f
}

// Merge completes cp from the ledger: the files it does not list join its relevant files with their use, the
// constraints its instructions do not quote join them verbatim, and a plugin's anchors its text lacks join its
// discoveries. It records in f how many of each kind it added.
func (l Ledger) Merge(cp *Checkpoint, f Fidelity) {
	added := func(kind string, n int) {
		if c, ok := f[kind]; ok && n > 0 {
			c.Added = n
			f[kind] = c
		}
	}
	n := 0
	for _, u := range l.Files {
		if !hasFile(cp.RelevantFiles, u.Path) {
			cp.RelevantFiles = append(cp.RelevantFiles, RelevantFile{Path: u.Path, Reason: u.Use})
			n++
		}
	}
	added(KindFiles, n)
	n = 0
	instructions := normalize(strings.Join(cp.Instructions, "\n"))
	for _, s := range l.Constraints {
		if !mentions(instructions, s) {
			cp.Instructions = append(cp.Instructions, s)
			n++
		}
	}
	added(KindConstraints, n)
	text := normalize(cp.Render())
	for _, kind := range sortedKeys(l.Extra) {
		n = 0
		for _, a := range l.Extra[kind] {
			if !mentions(text, a) {
				cp.Discoveries = append(cp.Discoveries, kind+": "+a)
				n++
			}
		}
		added(kind, n)
	}
}

// hasFile says whether files lists path (the same path, or one ending with the other at a separator).
func hasFile(files []RelevantFile, path string) bool {
	for _, f := range files {
		if f.Path == path || strings.HasSuffix(f.Path, "/"+path) || strings.HasSuffix(path, "/"+f.Path) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
