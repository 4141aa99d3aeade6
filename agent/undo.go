package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
)

// ErrNothingToUndo: the session's last turn changed no file that is not undone already.
var ErrNothingToUndo = errors.New("the last turn changed no files (or its changes are undone already)")

// UndoResult is what undoing the file changes of a turn did.
type UndoResult struct {
	// Restored are the files put back as they were before the turn (a file the turn created is removed).
	Restored []string `json:"restored"`
	// ChangedSince are files changed after the turn wrote them: left alone unless the undo was forced.
	ChangedSince []string `json:"changedSince"`
}

// UndoTurn restores the files the session's last turn wrote to what they held before it. A file changed since
// the turn wrote it is left alone and listed in ChangedSince, unless force. The transcript gets a note saying
// what was undone, so that the model does not count on the changes.
func (a *Agent) UndoTurn(id string, force bool) (UndoResult, error) {
	defer a.shared.lockTurn(a.Store, id)()
	a.state(id).discardAhead()
	var res UndoResult
	view, err := a.Store.Transcript(id)
	if err != nil {
		return res, err
	}
	start := len(view.Messages)
	for start > 0 && !(view.Messages[start-1].Role == transcript.RoleUser && !view.Messages[start-1].Summary) {
		start--
	}
	if start == 0 {
		return res, ErrNothingToUndo
	}
	since := view.Messages[start-1].CreatedAt
	calls := map[string]bool{}
	for _, m := range view.Messages[start:] {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
	}
	all, err := a.Store.FileChanges(id)
	if err != nil {
		return res, err
	}
	// Per file, in the order first written: the oldest change holds what to restore, the newest what the
	// turn left there.
	type file struct {
		first, last storage.FileChange
		seqs        []uint64
	}
	files, order := map[string]*file{}, []string{}
	for _, c := range all {
		if c.Undone || !calls[c.CallID] || c.At.Before(since) {
			continue
		}
		f := files[c.Path]
		if f == nil {
			f = &file{first: c}
			files[c.Path] = f
			order = append(order, c.Path)
		}
		f.last = c
		f.seqs = append(f.seqs, c.Seq)
	}
	if len(order) == 0 {
		return res, ErrNothingToUndo
	}
	var undone []uint64
	for _, p := range order {
		f := files[p]
		existed, now, err := a.Tools.Snapshot(p)
		if err != nil {
			return res, err
		}
		sum := sha256.Sum256(now)
		if (!existed || hex.EncodeToString(sum[:]) != f.last.AfterSum) && !force {
			res.ChangedSince = append(res.ChangedSince, p)
			continue
		}
		if err := a.Tools.Restore(p, f.first.Existed, f.first.Before); err != nil {
			return res, fmt.Errorf("restoring %s: %w", p, err)
		}
		res.Restored = append(res.Restored, p)
		undone = append(undone, f.seqs...)
	}
	if len(undone) > 0 {
		if err := a.Store.MarkUndone(id, undone); err != nil {
			return res, err
		}
		note := transcript.Message{Role: transcript.RoleUser, Text: "[alisio] The user undid the file changes of the previous turn: " +
			strings.Join(res.Restored, ", ") + " are back as they were before it. Do not count on those changes."}
		if _, err := a.Store.Append(id, note); err != nil {
			return res, fmt.Errorf("noting the undo in the session: %w", err)
		}
		a.state(id).forgetMeter()
	}
	return res, nil
}
