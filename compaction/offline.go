package compaction

import (
	"context"
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// Offline is a Summarizer that needs no model: it builds the checkpoint from the transcript itself (the goal
// from the first user messages, the user's constraints verbatim, files from tool calls, the last assistant
// state). It is the default when no provider is configured; it is never a silent fallback for a provider that
// fails.
type Offline struct{}

// constraintWords mark a user sentence as an instruction or constraint worth keeping verbatim.
var constraintWords = regexp.MustCompile(`(?i)\b(must|must not|never|always|do not|don't|dont|only|avoid|keep|should|shouldn't|please|make sure|without|instead)\b`)

// pathPattern finds file paths in tool arguments.
var pathPattern = regexp.MustCompile(`(?:[\w.-]+/)*[\w.-]+\.[A-Za-z0-9]{1,8}\b`)

var sentenceEnd = regexp.MustCompile(`[.!?]\s+`)

var pathKeys = []string{"path", "file", "file_path", "filename", "filePath", "target", "target_file"}

const offlineItemCap = 400

// completionReserve is the room the offline checkpoint leaves in its budget for what Compact adds to every
// checkpoint (the line saying what it stands for, the ledger's additions).
const completionReserve = 400

// readsSpan says that the offline summarizer needs no rendered prompt (see spanReader).
func (Offline) readsSpan() {}

// Summarize implements Summarizer.
func (Offline) Summarize(_ context.Context, req SummaryRequest) (SummaryReply, error) {
	var cp Checkpoint
	if req.Previous != nil {
		cp = *req.Previous
		cp.Partial, cp.Missing = false, nil
	}
	files := map[string]int{}
	for _, f := range cp.RelevantFiles {
		files[f.Path] += 2
	}
	order := []string{}
	for _, f := range cp.RelevantFiles {
		order = append(order, f.Path)
	}
	// results pairs each call (message, call index) with its result text; an ID reused after its result
	// pairs with the latest open call of that ID.
	type callAt struct{ msg, call int }
	results := map[callAt]string{}
	open := map[string]callAt{}
	for i := range req.Span {
		m := &req.Span[i]
		for j, c := range m.ToolCalls {
			open[c.ID] = callAt{i, j}
		}
		if at, ok := open[m.ToolCallID]; ok && m.Role == transcript.RoleTool {
			results[at] = m.Text
			delete(open, m.ToolCallID)
		}
	}
	lastUser, lastState := "", ""
	instructions, discoveries := newUniqueList(cp.Instructions), newUniqueList(cp.Discoveries)
	var calls []callAt // every call, in order: only the last ones become accomplished entries
	for i := range req.Span {
		m := &req.Span[i]
		switch {
		case m.Summary:
			if cp.CurrentState == "" && lastState == "" {
				discoveries.add(clipRunes(m.Text, 4*offlineItemCap))
			}
		case m.Role == transcript.RoleUser:
			lastUser = m.Text
			if cp.Goal == "" {
				cp.Goal = clipRunes(firstParagraph(m.Text), 2*offlineItemCap)
			}
			for _, s := range sentences(m.Text) {
				if constraintWords.MatchString(s) {
					instructions.add(clipRunes(s, offlineItemCap))
				}
			}
		case m.Role == transcript.RoleAssistant:
			if t := strings.TrimSpace(m.Text); t != "" {
				lastState = t
			}
			for j, c := range m.ToolCalls {
				for _, p := range callPaths(c.Arguments) {
					if _, seen := files[p]; !seen {
						order = append(order, p)
					}
					files[p]++
				}
				calls = append(calls, callAt{i, j})
			}
		}
	}
	if lastState != "" {
		cp.CurrentState = clipRunes(lastState, 2*offlineItemCap)
	}
	cp.Instructions, cp.Discoveries = instructions.items, discoveries.items
	// The previous entries, then one per call; past 40, a note and the last 39.
	acc, skip := []string{}, 0
	if total := len(cp.Accomplished) + len(calls); total > 40 {
		acc, skip = append(acc, "(earlier tool work omitted)"), total-39
	}
	if skip < len(cp.Accomplished) {
		acc = append(acc, cp.Accomplished[skip:]...)
	}
	for _, at := range calls[max(skip-len(cp.Accomplished), 0):] {
		c := req.Span[at.msg].ToolCalls[at.call]
		outcome := firstLine(results[at])
		acc = append(acc, clipRunes(c.Name+" "+clipRunes(c.Arguments, 160)+" → "+outcome, offlineItemCap))
	}
	cp.Accomplished = acc
	if len(cp.Instructions) > 40 {
		cp.Instructions = cp.Instructions[len(cp.Instructions)-40:]
	}
	if lastUser != "" {
		cp.NextSteps = []string{"Continue the latest request: " + clipRunes(firstParagraph(lastUser), offlineItemCap),
			"Check the messages kept after this checkpoint before acting; this checkpoint was built without a model."}
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]] > files[order[b]] })
	cp.RelevantFiles = nil
	for _, p := range order {
		if len(cp.RelevantFiles) == 20 {
			break
		}
		cp.RelevantFiles = append(cp.RelevantFiles, RelevantFile{Path: p, Reason: "used by tool calls"})
	}
	if req.Focus != "" {
		cp.NextSteps = append([]string{"Focus requested by the user: " + req.Focus}, cp.NextSteps...)
	}
	for _, f := range []*[]string{&cp.Instructions, &cp.Discoveries, &cp.Accomplished, &cp.NextSteps} {
		if *f == nil {
			*f = []string{}
		}
	}
	if cp.RelevantFiles == nil {
		cp.RelevantFiles = []RelevantFile{}
	}
	if req.MaxOutputTokens > 0 {
		fitCheckpoint(&cp, max(req.MaxOutputTokens*4-completionReserve, req.MaxOutputTokens*2))
	}
	var out any = cp
	if len(req.Fields) > 0 {
		all := map[string]json.RawMessage{}
		b, _ := json.Marshal(cp)
		_ = json.Unmarshal(b, &all)
		only := map[string]json.RawMessage{}
		for _, f := range req.Fields {
			only[f] = all[f]
		}
		out = only
	}
	b, err := json.Marshal(out)
	return SummaryReply{Text: string(b)}, err
}

// fitCheckpoint shortens cp until its rendered text holds at most maxChars, giving up first what is least
// needed to continue: the oldest tool work, discoveries, the least used files, then the oldest of the user's
// constraints, and last cutting the goal, the current state and the next steps short. A checkpoint written
// for a small budget must fit it, or the compaction that wrote it leaves the session over its limit.
func fitCheckpoint(cp *Checkpoint, maxChars int) {
	over := func() bool { return utf8.RuneCountInString(cp.Render()) > maxChars }
	dropFirst := func(list *[]string, keep int) bool {
		if len(*list) <= keep {
			return false
		}
		*list = (*list)[1:]
		return true
	}
	steps := []func() bool{
		func() bool { return dropFirst(&cp.Accomplished, 3) },
		func() bool { return dropFirst(&cp.Discoveries, 0) },
		func() bool {
			if len(cp.RelevantFiles) <= 3 {
				return false
			}
			cp.RelevantFiles = cp.RelevantFiles[:len(cp.RelevantFiles)-1]
			return true
		},
		func() bool { return dropFirst(&cp.Accomplished, 0) },
		func() bool {
			if len(cp.RelevantFiles) == 0 {
				return false
			}
			cp.RelevantFiles = cp.RelevantFiles[:len(cp.RelevantFiles)-1]
			return true
		},
		func() bool { return dropFirst(&cp.Instructions, 1) },
	}
	for _, step := range steps {
		for over() && step() {
		}
	}
	// Still over: the remaining texts share what is left, the constraints and the goal first.
	for _, n := range []int{offlineItemCap, offlineItemCap / 2, 80} {
		if !over() {
			return
		}
		cp.Goal, cp.CurrentState = clipRunes(cp.Goal, n), clipRunes(cp.CurrentState, n)
		for _, list := range []*[]string{&cp.NextSteps, &cp.Instructions} {
			for i := range *list {
				(*list)[i] = clipRunes((*list)[i], n)
			}
		}
	}
	for over() && (dropFirst(&cp.NextSteps, 0) || dropFirst(&cp.Instructions, 0)) {
	}
	if over() {
		cp.CurrentState = ""
	}
}

func callPaths(args string) []string {
	var obj map[string]json.RawMessage // only the path values are decoded
	var out []string
	if json.Unmarshal([]byte(args), &obj) == nil {
		for _, k := range pathKeys {
			var s string
			if v := obj[k]; len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s != "" {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, m := range pathPattern.FindAllString(args, 5) {
		if looksLikeFile(m) {
			out = append(out, m)
		}
	}
	return out
}

// fileExtensions are the extensions a word in free text must end with to be taken for a file name: without
// the list, code in a command (f.write, self.encoding) reads as files.
var fileExtensions = map[string]bool{"go": true, "py": true, "js": true, "ts": true, "tsx": true, "jsx": true, "rs": true,
	"java": true, "kt": true, "c": true, "h": true, "cc": true, "cpp": true, "hpp": true, "cs": true, "rb": true, "php": true,
	"swift": true, "lua": true, "sh": true, "md": true, "txt": true, "json": true, "yaml": true, "yml": true, "toml": true,
	"xml": true, "html": true, "css": true, "sql": true, "proto": true, "mod": true, "sum": true, "lock": true, "cfg": true,
	"ini": true, "conf": true, "rst": true, "vue": true, "svelte": true, "scala": true, "ex": true, "exs": true, "zig": true}

// looksLikeFile says whether m, a path-shaped word found in free text, names a file: a path with a folder, or a
// name with a known extension.
func looksLikeFile(m string) bool {
	ext := strings.ToLower(m[strings.LastIndexByte(m, '.')+1:])
	if strings.Contains(m, "/") {
		return !strings.HasPrefix(m, "/") || fileExtensions[ext]
	}
	return strings.Count(m, ".") == 1 && fileExtensions[ext]
}

// uniqueList is a list of strings that takes each non-empty string once, in order of first appearance.
type uniqueList struct {
	items []string
	seen  map[string]bool
}

// newUniqueList starts a uniqueList with a copy of items.
func newUniqueList(items []string) *uniqueList {
	u := &uniqueList{items: append([]string(nil), items...), seen: make(map[string]bool, len(items))}
	for _, s := range items {
		u.seen[s] = true
	}
	return u
}

func (u *uniqueList) add(s string) {
	if s != "" && !u.seen[s] {
		u.seen[s] = true
		u.items = append(u.items, s)
	}
}

func sentences(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		for _, s := range sentenceEnd.Split(line, -1) {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func firstParagraph(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i > 0 {
		return s[:i]
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clipRunes(s, 160)
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
