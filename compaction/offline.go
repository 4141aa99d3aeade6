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
	lastUser := ""
	for i := range req.Span {
		m := &req.Span[i]
		switch {
		case m.Summary:
			if cp.CurrentState == "" {
				cp.Discoveries = appendUnique(cp.Discoveries, clipRunes(m.Text, 4*offlineItemCap))
			}
		case m.Role == transcript.RoleUser:
			lastUser = m.Text
			if cp.Goal == "" {
				cp.Goal = clipRunes(firstParagraph(m.Text), 2*offlineItemCap)
			}
			for _, s := range sentences(m.Text) {
				if constraintWords.MatchString(s) {
					cp.Instructions = appendUnique(cp.Instructions, clipRunes(s, offlineItemCap))
				}
			}
		case m.Role == transcript.RoleAssistant:
			if t := strings.TrimSpace(m.Text); t != "" {
				cp.CurrentState = clipRunes(t, 2*offlineItemCap)
			}
			for j, c := range m.ToolCalls {
				for _, p := range callPaths(c.Arguments) {
					if _, seen := files[p]; !seen {
						order = append(order, p)
					}
					files[p]++
				}
				outcome := firstLine(results[callAt{i, j}])
				cp.Accomplished = append(cp.Accomplished, clipRunes(c.Name+" "+clipRunes(c.Arguments, 160)+" → "+outcome, offlineItemCap))
			}
		}
	}
	if len(cp.Accomplished) > 40 {
		cp.Accomplished = append([]string{"(earlier tool work omitted)"}, cp.Accomplished[len(cp.Accomplished)-39:]...)
	}
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

func callPaths(args string) []string {
	var obj map[string]any
	var out []string
	if json.Unmarshal([]byte(args), &obj) == nil {
		for _, k := range pathKeys {
			if s, ok := obj[k].(string); ok && s != "" {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, m := range pathPattern.FindAllString(args, 5) {
		if strings.Contains(m, "/") || strings.Count(m, ".") == 1 {
			out = append(out, m)
		}
	}
	return out
}

func appendUnique(list []string, s string) []string {
	if s == "" || contains(list, s) {
		return list
	}
	return append(list, s)
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
