package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// maxCheckpointFile bounds the edited checkpoint a command reads.
const maxCheckpointFile = 4 << 20

func (a *app) checkpointCommand() *cobra.Command {
	var set string
	cmd := &cobra.Command{
		Use:   "checkpoint SESSION [--set FILE]",
		Short: "print a session's checkpoint as an editable JSON document, or replace it with an edited one (--set FILE, - for stdin)",
		Long: "checkpoint prints the session's current checkpoint as the JSON document its edits take (goal, instructions,\n" +
			"discoveries, accomplished, currentState, nextSteps: strings or lists of strings; relevantFiles: a list of\n" +
			"{\"path\": …, \"reason\": …}). Edit it, then give it back with --set:\n" +
			"it is checked against the checkpoint schema like a model's, the old checkpoint stays in the history, and\n" +
			"`alisio-lsp compact SESSION --undo` undoes the edit.\n\n" +
			"  alisio-lsp checkpoint SESSION > checkpoint.json\n  $EDITOR checkpoint.json\n  alisio-lsp checkpoint SESSION --set checkpoint.json",
		Args: oneArg,
		PreRun: func(*cobra.Command, []string) {
			a.readsStdin = set == "-"
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				if set == "" {
					return a.printEditable(st, id)
				}
				doc, err := a.readCheckpointFile(set)
				if err != nil {
					return err
				}
				m, err := a.contextManager(st, cmd, nil)
				if err != nil {
					return err
				}
				edit, err := m.EditCheckpoint(id, doc, "")
				switch {
				case err != nil:
					return err
				case a.jsonOut:
					return a.emit("checkpoint_edited", map[string]any{"session": id, "checkpoint": edit.Checkpoint, "unchanged": edit.Unchanged})
				case edit.Unchanged:
					a.printf("the checkpoint of %s is unchanged: the document is the checkpoint in force, so nothing was saved\n", id)
				default:
					a.printf("✔ the checkpoint of %s is replaced (%s; undo: %s compact %s --undo)\n", id, api.Human(utf8.RuneCountInString(edit.Checkpoint.Render()))+" chars", a.cli(), id)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&set, "set", "", "replace the checkpoint with the edited document in FILE (- reads stdin)")
	return cmd
}

// printEditable prints session id's checkpoint as its editable document.
func (a *app) printEditable(st *storage.Store, id string) error {
	ck, _, err := agent.CurrentCheckpoint(st, id)
	if err != nil {
		return err
	}
	if ck == nil {
		return agent.ErrNoCheckpoint
	}
	cp, err := compaction.ParseStructured(ck.Structured)
	if err != nil {
		return fmt.Errorf("reading the checkpoint of %s: %w", id, err)
	}
	if a.jsonOut {
		return a.emit("checkpoint", map[string]any{"session": id, "checkpoint": json.RawMessage(compaction.Editable(cp))})
	}
	_, err = a.stdout.Write(compaction.Editable(cp))
	return err
}

// readCheckpointFile reads the edited document of --set (- for stdin), at most maxCheckpointFile bytes.
func (a *app) readCheckpointFile(name string) ([]byte, error) {
	var r io.Reader = a.stdin
	if name != "-" {
		f, err := os.Open(a.path(name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("there is no file %s: write the checkpoint there first (`%s checkpoint SESSION > %s`), or give - to read it from standard input", a.path(name), a.cli(), name)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the edited checkpoint: %w", err)
		}
		defer f.Close()
		r = f
	}
	doc, err := io.ReadAll(io.LimitReader(r, maxCheckpointFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading the edited checkpoint: %w", err)
	}
	if len(doc) > maxCheckpointFile {
		return nil, fmt.Errorf("the edited checkpoint %s is over %d MB; a checkpoint is far smaller", name, maxCheckpointFile>>20)
	}
	return doc, nil
}
