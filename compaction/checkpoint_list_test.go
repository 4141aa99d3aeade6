package compaction

import (
	"strings"
	"testing"
)

// TestRender_ItemsOfSeveralLines: an instruction or discovery of several lines stays one item of its list.
func TestRender_ItemsOfSeveralLines(t *testing.T) {
	cp := Checkpoint{Goal: "ship", Instructions: []string{"Commit messages:\n- imperative\n- short\n", "No force pushes."}}
	want := "## User instructions and constraints\n- Commit messages:\n  - imperative\n  - short\n- No force pushes."
	if r := cp.Render(); !strings.Contains(r, want) {
		t.Errorf("rendered:\n%s", r)
	}
}
