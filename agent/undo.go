package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/alisio-lsp/alisio-lsp/compaction"
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

// CompactionUndo is what undoing a session's last compaction (or reduction, or checkpoint edit) did.
type CompactionUndo struct {
	// Kind is what was undone: "compaction", "reduction" or "checkpoint edit".
	Kind string `json:"kind"`
	// Restored is how many messages the transcript held before it, now its start again; Kept how many
	// appended since stay after them; More says an earlier one can be undone too.
	Restored int  `json:"restored"`
	Kept     int  `json:"kept"`
	More     bool `json:"more"`
	// WillCompact says the restored transcript is past the compaction threshold, so the next model call
	// compacts it again; OverHardLimit that it is over the hard limit (the next call reduces or compacts it).
	WillCompact   bool `json:"willCompact"`
	OverHardLimit bool `json:"overHardLimit"`
}

// UndoCompaction restores session id's transcript exactly as it was before its last compaction, reduction or
// checkpoint edit, keeping the messages appended since (storage.Store.Undo), and says whether the restored
// transcript is over the budget. It returns storage.ErrNothingToUndo when there is none.
func (m *ContextManager) UndoCompaction(id string) (CompactionUndo, error) {
	res, err := m.Store.Undo(id)
	if err != nil {
		return CompactionUndo{}, err
	}
	out := CompactionUndo{Kind: res.Kind, Restored: res.Restored, Kept: res.Kept, More: res.More}
	if st, err := m.Status(id); err == nil {
		out.WillCompact, out.OverHardLimit = strings.HasPrefix(st.NextAction, "compact"), st.OverHardLimit
	}
	return out, nil
}

// UndoCompaction is ContextManager.UndoCompaction after any turn of the session in progress; it discards the
// background summary, written for the transcript as it was.
func (a *Agent) UndoCompaction(id string) (CompactionUndo, error) {
	st := a.state(id)
	defer a.shared.lockTurn(a.Store, id)()
	defer st.forgetMeter()
	st.discardAhead()
	return a.ContextManager.UndoCompaction(id)
}

// ErrNoCheckpoint: the session has no checkpoint to edit.
var ErrNoCheckpoint = errors.New("the session has no checkpoint: it has not been compacted, or its compactions were undone")

// ErrCheckpointChanged: the edit began from a checkpoint that is no longer the one in force (a compaction or
// another edit wrote a newer one since), so saving it would replace what the edit never saw.
var ErrCheckpointChanged = errors.New("the checkpoint changed since this edit began (a compaction or another edit wrote a newer one), so saving the edit would replace it")

// CheckpointChangedError is ErrCheckpointChanged with the ID of the checkpoint in force, against which the
// edit, once its author has seen that one, can be saved.
type CheckpointChangedError struct{ InForce string }

func (e *CheckpointChangedError) Error() string { return ErrCheckpointChanged.Error() }

// Is makes the error ErrCheckpointChanged.
func (e *CheckpointChangedError) Is(target error) bool { return target == ErrCheckpointChanged }

// CheckpointEdit is what saving an edited checkpoint did.
type CheckpointEdit struct {
	// Checkpoint is the checkpoint in force after the edit.
	Checkpoint compaction.Checkpoint
	// Unchanged: the document renders the checkpoint already in force, so nothing was stored (no version, no
	// step to undo).
	Unchanged bool
}

// EditCheckpoint replaces session id's checkpoint with the edited document doc (compaction.Editable's shape),
// after the checks a model's checkpoint gets (compaction.EditCheckpoint). The checkpoint before stays in the
// history, and the edit can be undone like a compaction. base, when given, is the ID of the checkpoint the edit
// began from: when another is in force now, nothing is saved (a CheckpointChangedError naming it).
func (m *ContextManager) EditCheckpoint(id string, doc []byte, base string) (CheckpointEdit, error) {
	v, err := m.Store.Transcript(id)
	if err != nil {
		return CheckpointEdit{}, err
	}
	pos := -1
	for pos+1 < len(v.Messages) && v.Messages[pos+1].Summary {
		pos++
	}
	if pos < 0 {
		return CheckpointEdit{}, ErrNoCheckpoint
	}
	if base != "" && v.Messages[pos].ID != base {
		return CheckpointEdit{}, &CheckpointChangedError{InForce: v.Messages[pos].ID}
	}
	current, _ := compaction.ParseStructured(v.Messages[pos].Structured)
	limit, _ := m.budget().HardLimit(m.ToolsChars())
	cp, msg, err := compaction.EditCheckpoint(doc, current, compaction.CheckpointLimit(limit))
	if err != nil {
		return CheckpointEdit{}, err
	}
	if msg.Text == v.Messages[pos].Text {
		return CheckpointEdit{Checkpoint: cp, Unchanged: true}, nil
	}
	rw := transcript.Rewrite{BaseEpoch: v.Session.Head.Epoch, BaseLen: len(v.Messages), Replace: map[int]transcript.Message{pos: msg}}
	if _, err := m.Store.Apply(id, rw); err != nil {
		return CheckpointEdit{}, fmt.Errorf("saving the edited checkpoint: %w", err)
	}
	return CheckpointEdit{Checkpoint: cp}, nil
}

// EditCheckpoint is ContextManager.EditCheckpoint after any turn of the session in progress; it discards the
// background summary, written for the checkpoint before.
func (a *Agent) EditCheckpoint(id string, doc []byte, base string) (CheckpointEdit, error) {
	st := a.state(id)
	defer a.shared.lockTurn(a.Store, id)()
	defer st.forgetMeter()
	st.discardAhead()
	return a.ContextManager.EditCheckpoint(id, doc, base)
}
