package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Change is what a file-writing call does to one file: its path (relative to the workspace, as the model wrote
// it), whether the file existed, what it held before and what it holds after.
type Change struct {
	Path    string
	Existed bool
	Before  []byte
	After   []byte
}

// plannedWrite is a Change with where and how the tools write it.
type plannedWrite struct {
	Change
	at   string
	perm fs.FileMode
}

// Writes reports whether the built-in tool name writes files: the calls whose changes are reviewed before they
// land and can be undone.
func Writes(name string) bool { return name == "write_file" || name == "edit_file" }

// Runs reports whether the built-in tool name runs commands.
func Runs(name string) bool { return name == "run_command" }

// CommandOf is the command a run_command call's arguments run ("" when they name none).
func CommandOf(arguments string) string {
	var args struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal([]byte(arguments), &args)
	return args.Command
}

// Propose is what the write_file or edit_file call would change, computed without writing. Its error is the
// one the call would return.
func (s *Set) Propose(name, arguments string) (Change, error) {
	t, ok := s.tools[name]
	if !ok || !Writes(name) {
		return Change{}, fmt.Errorf("%s does not write files", name)
	}
	args, err := t.decode(name, arguments)
	if err != nil {
		return Change{}, err
	}
	var w plannedWrite
	if name == "edit_file" {
		w, err = s.planEdit(args)
	} else {
		w, err = s.planWrite(args)
	}
	return w.Change, err
}

// Snapshot is the file at p (relative to the workspace) as it is now; existed is false when there is none.
func (s *Set) Snapshot(p string) (existed bool, content []byte, err error) {
	clean, err := rel(map[string]any{"path": p}, "path")
	if err != nil {
		return false, nil, err
	}
	content, err = s.root.ReadFile(s.resolve(clean))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, explain(clean, err)
	}
	return true, content, nil
}

// Restore puts content back at p, or removes p when it did not exist, inside the workspace only.
func (s *Set) Restore(p string, existed bool, content []byte) error {
	clean, err := rel(map[string]any{"path": p}, "path")
	if err != nil {
		return err
	}
	at := s.resolve(clean)
	if !existed {
		if err := s.root.Remove(at); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return explain(clean, err)
		}
		return nil
	}
	perm := fs.FileMode(0o644)
	if info, err := s.root.Stat(at); err == nil {
		perm = info.Mode().Perm()
	}
	if dir := filepath.Dir(at); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return explain(clean, err)
		}
	}
	if err := s.writeAtomic(at, content, perm); err != nil {
		return explain(clean, err)
	}
	s.note(clean, true)
	return nil
}
