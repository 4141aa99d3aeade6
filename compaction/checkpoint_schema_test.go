package compaction_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/compaction"
)

// TestEditorSchemaIsTheCheckpointSchema: the schema VS Code checks an edited checkpoint with as you type
// (editors/vscode/schemas) is the one the daemon checks it with. ALISIO_WRITE_SCHEMA=1 writes it.
func TestEditorSchemaIsTheCheckpointSchema(t *testing.T) {
	path := filepath.Join("..", "editors", "vscode", "schemas", "checkpoint.schema.json")
	var want bytes.Buffer
	if err := json.Indent(&want, compaction.CheckpointSchema(nil), "", "  "); err != nil {
		t.Fatal(err)
	}
	want.WriteString("\n")
	if os.Getenv("ALISIO_WRITE_SCHEMA") != "" {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s differs from compaction.CheckpointSchema (%v): run ALISIO_WRITE_SCHEMA=1 go test -run TestEditorSchemaIsTheCheckpointSchema ./compaction", path, err)
	}
}
