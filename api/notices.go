package api

import (
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/agent"
)

// NoticeKind says what a Notice is about, for the editors to offer its action.
type NoticeKind string

// The kinds of notice.
const (
	NoticeUncertainCalls    NoticeKind = "uncertainCalls"
	NoticePartialCheckpoint NoticeKind = "partialCheckpoint"
	// NoticeProjectRules: the project's rules file is over what a request sends of it.
	NoticeProjectRules NoticeKind = "projectRules"
)

// Notice is one sentence about a session's state, with its kind.
type Notice struct {
	Kind NoticeKind `json:"kind"`
	Text string     `json:"text"`
}

// Notices are the sentences about a session's state that a user should read beside its meter: tool calls a
// crash left with an unknown outcome, a partial checkpoint. Made here once, in the words of the edge.
func Notices(st agent.Status, w Words) []Notice {
	var out []Notice
	if n := len(st.UncertainCalls); n > 0 {
		out = append(out, Notice{NoticeUncertainCalls, fmt.Sprintf("%d tool call%s cut off by a crash, outcome unknown (%s): record that (%s), then continue; compaction waits for it.",
			n, plural(n, " was", "s were"), strings.Join(st.UncertainCalls, ", "), recoverWords(w, st.Session))})
	}
	if st.LastCheckpointPartial {
		out = append(out, Notice{NoticePartialCheckpoint, "The last checkpoint is partial: the summarizer's output budget cut it; raise " + w.MaxOutput + " for complete ones."})
	}
	if r := st.Rules; r != nil && r.Cut {
		out = append(out, Notice{NoticeProjectRules, fmt.Sprintf("%s is %s characters, over the %s a request sends of it: the model reads only its start. Shorten it, or raise projectRules.maxChars (at most a tenth of limits.maxContextChars).",
			r.File, Human(r.FileChars), Human(r.Limit))})
	}
	for i := range out {
		out[i].Text = w.Settings(out[i].Text)
	}
	return out
}

// Count is n with its noun: "1 tool call", "3 tool calls".
func Count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// plural picks one's or many's ending for n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
