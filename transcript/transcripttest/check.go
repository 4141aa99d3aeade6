package transcripttest

import (
	"fmt"

	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// CheckStructure verifies what every transcript must satisfy: known roles, unique non-empty call IDs, every
// tool result answering exactly one earlier call. Calls without a result are allowed (uncertain calls).
func CheckStructure(msgs []transcript.Message) error {
	calls := map[string]bool{}
	answered := map[string]bool{}
	for i := range msgs {
		m := &msgs[i]
		if !m.Role.Valid() {
			return fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			if c.ID == "" || calls[c.ID] {
				return fmt.Errorf("message %d: call ID %q empty or repeated", i, c.ID)
			}
			calls[c.ID] = true
		}
		if m.Role == transcript.RoleTool {
			if !calls[m.ToolCallID] || answered[m.ToolCallID] {
				return fmt.Errorf("message %d: result for call %q has no pending call", i, m.ToolCallID)
			}
			answered[m.ToolCallID] = true
		}
	}
	return nil
}
