// Package transcripttest holds what tests share about transcripts: the structure check every test runs on the
// transcripts it produces, and the corpus of real and hand-written transcript files (synthetic ones come from
// package synthetic).
package transcripttest

import (
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// CheckStructure verifies what every transcript must satisfy: known roles, non-empty call IDs never shared by
// two calls open at once, every tool result answering exactly one earlier open call. An ID may be reused after
// its call got its result (sequentially numbered trajectories). Calls without a result are allowed (uncertain
// calls).
func CheckStructure(msgs []transcript.Message) error {
	open := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		if !m.Role.Valid() {
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || open[c.ID] {
				return fmt.Errorf("message %d: call ID %q empty or repeated", i, c.ID)
			}
			open[c.ID] = true
		}
		if m.Role == transcript.RoleTool {
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: result for call %q has no pending call", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		}
	}
	return nil
}
