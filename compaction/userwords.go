package compaction

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// userWordsTitle heads the checkpoint's section of the user's own words.
const userWordsTitle = "The user's own words, quoted exactly (newest first)"

// minShortened is the least a shortened message keeps; with less room left, older messages are counted, not
// quoted.
const minShortened = 200

// carryUserWords sets cp.UserWords to the user's messages of span, newest first, then those the previous
// checkpoint carried, within budget chars: a message that does not fit is shortened with a marker saying so,
// and once there is no room left the rest are counted in cp.UserWordsOmitted (their constraint sentences stay
// in the instructions, see Ledger). A budget of 0 carries nothing.
func carryUserWords(cp *Checkpoint, span []transcript.Message, budget int) {
	cp.UserWords, cp.UserWordsOmitted = nil, 0
	if budget <= 0 {
		return
	}
	var words []string
	omitted := 0
	if len(span) > 0 && span[0].Summary {
		if prev, err := ParseStructured(span[0].Structured); err == nil {
			words, omitted = prev.UserWords, prev.UserWordsOmitted
		}
		span = span[1:]
	}
	var mine []string
	for i := len(span) - 1; i >= 0; i-- {
		if m := &span[i]; m.Role == transcript.RoleUser && !m.Summary && strings.TrimSpace(m.Text) != "" {
			mine = append(mine, m.Text)
		}
	}
	room := budget
	for _, w := range append(mine, words...) {
		n := utf8.RuneCountInString(w)
		switch {
		case n <= room:
			cp.UserWords = append(cp.UserWords, w)
			room -= n
		case room >= minShortened:
			cp.UserWords = append(cp.UserWords, shorten(w, room))
			room = 0
		default:
			omitted++
		}
	}
	cp.UserWordsOmitted = omitted
}

// shorten keeps the start of w within n chars, ending with a marker that says how much was kept.
func shorten(w string, n int) string {
	total := utf8.RuneCountInString(w)
	marker := fmt.Sprintf(" […shortened by compaction: the first %%d of %d characters are quoted]", total)
	keep := max(n-utf8.RuneCountInString(marker)-4, 1)
	return string([]rune(w)[:keep]) + fmt.Sprintf(marker, keep)
}

// quoteAll renders the user's words as quotations, one after another, and says how many were left out.
func quoteAll(words []string, omitted int) string {
	if len(words) == 0 && omitted == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("These are the user's messages from the compacted part of the conversation, word for word: follow them as said.\n")
	for _, w := range words {
		b.WriteString("\n> ")
		b.WriteString(strings.ReplaceAll(strings.TrimSpace(w), "\n", "\n> "))
		b.WriteString("\n")
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n(%d older message(s) of the user are not quoted, for lack of room: their constraints are under User instructions, and the session history keeps them word for word.)\n", omitted)
	}
	return b.String()
}

// UserWordsChars is how many of a checkpoint message's chars quote the user's words, read from its
// structured fields (0 when it quotes none): the meter shows them as a part of their own.
func UserWordsChars(structured json.RawMessage) int {
	var cp struct {
		UserWords        []string `json:"userWords"`
		UserWordsOmitted int      `json:"userWordsOmitted"`
	}
	if len(structured) == 0 || json.Unmarshal(structured, &cp) != nil {
		return 0
	}
	body := quoteAll(cp.UserWords, cp.UserWordsOmitted)
	if body == "" {
		return 0
	}
	return utf8.RuneCountInString("\n## " + userWordsTitle + "\n" + body)
}
