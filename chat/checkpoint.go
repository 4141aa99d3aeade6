package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/alisio-lsp/alisio-lsp/api"
)

// The steps of /checkpoint edit, each the answer of what ran before it.
type (
	// checkpointMsg is the session's checkpoint, read for /checkpoint (edit: to edit it).
	checkpointMsg struct {
		res  api.CheckpointResult
		edit bool
		err  error
	}
	// editedMsg is the editor's end: the file it edited, what it held when the editor opened it, the
	// checkpoint in force then (as the editor got it unedited), the checkpoint the edit is saved against, and
	// how the editor ended.
	editedMsg struct {
		session, path, base string
		opened, inForce     []byte
		openedInfo          os.FileInfo
		draft               bool
		err                 error
	}
	// checkpointSavedMsg is the daemon's answer to the edited document doc, saved against base.
	checkpointSavedMsg struct {
		session, base string
		doc           []byte
		err           error
	}
)

// checkpointDraft is an edit the daemon refused, kept for the next /checkpoint edit: the document and the
// checkpoint it is saved against — the one it was written against, or, after a refusal because a newer one
// is in force (which the user was shown), that newer one, so that saving it again replaces that one and no
// other ("": the one in force when it is opened again).
type checkpointDraft struct {
	doc  []byte
	base string
}

// checkpointCommand runs /checkpoint [edit]: it reads the session's checkpoint, to show it or to edit it.
func (m *model) checkpointCommand(arg string) tea.Cmd {
	edit := strings.EqualFold(arg, "edit")
	if arg != "" && !edit {
		m.notice = "/checkpoint takes nothing (shows it), or edit"
		return nil
	}
	if m.session == "" {
		m.say(m.sty.failed.Render(noMessagesYet("/checkpoint")))
		return nil
	}
	m.busy = "checkpoint"
	m.refresh()
	ref := api.SessionRef{Session: m.session}
	return func() tea.Msg {
		var res api.CheckpointResult
		err := m.client.Call(m.ctx, "alisio/checkpoint", api.CheckpointParams{SessionRef: ref}, &res)
		return checkpointMsg{res: res, edit: edit, err: err}
	}
}

// checkpointRead shows the checkpoint read, or opens it in the user's editor.
func (m *model) checkpointRead(msg checkpointMsg) tea.Cmd {
	m.busy = ""
	switch {
	case msg.err != nil:
		m.say(m.sty.failed.Render(errorText(msg.err)))
		return nil
	case msg.res.Checkpoint == nil:
		m.say("This session has no checkpoint: it has not been compacted, or its compactions were undone (/compact writes one).")
		return nil
	case !msg.edit:
		// What it is comes after it, where the view that follows the end shows it.
		foot := fmt.Sprintf("↑ The checkpoint in force: it replaced %d messages%s. /checkpoint edit changes it; /undo puts back what it replaced.",
			msg.res.ReplacedMessages, when(msg.res.CreatedAt))
		if changed := msg.res.RelevantFilesChangedSince; len(changed) > 0 {
			foot += " Changed since it was written: " + strings.Join(changed, ", ") + "."
		}
		m.add(block{markdown: msg.res.Text, text: m.sty.dim.Render(foot)}) // drawn again at each width
		m.refresh()
		return nil
	}
	// One field a line, as the daemon writes it (the JSON-RPC answer carries it compacted).
	var indented bytes.Buffer
	if json.Indent(&indented, msg.res.Editable, "", "  ") != nil {
		indented.Reset()
		indented.Write(msg.res.Editable)
	}
	indented.WriteByte('\n')
	inForce := indented.Bytes()
	doc, base := inForce, msg.res.ID
	draft, isDraft := m.checkpointDrafts[msg.res.Session]
	if isDraft {
		// The edit the daemon refused, to be mended rather than typed again, against the checkpoint it was
		// written for: when a compaction wrote a newer one since, the daemon says so rather than replace it.
		doc = draft.doc
		if draft.base != "" {
			base = draft.base
		}
	}
	f, err := os.CreateTemp("", "alisio-checkpoint-*.json") // the user's alone (0600)
	var info os.FileInfo
	if err == nil {
		_, err = f.Write(doc)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		info, err = os.Stat(f.Name())
	}
	if err != nil {
		if f != nil {
			_ = os.Remove(f.Name())
		}
		m.say(m.sty.failed.Render("could not write the checkpoint for the editor: " + err.Error()))
		return nil
	}
	name, args := editorCommand()
	edited := editedMsg{session: msg.res.Session, path: f.Name(), base: base, opened: doc, inForce: inForce, openedInfo: info, draft: isDraft}
	return tea.ExecProcess(exec.Command(name, append(args, f.Name())...), func(err error) tea.Msg {
		edited.err = err
		return edited
	})
}

// checkpointEdited sends what the editor saved to the daemon: nothing when the editor quit without saving or
// saved the checkpoint in force; an emptied file drops a kept edit.
func (m *model) checkpointEdited(msg editedMsg) tea.Cmd {
	doc, err := os.ReadFile(msg.path)
	info, statErr := os.Stat(msg.path)
	_ = os.Remove(msg.path)
	kept := ""
	if msg.draft {
		kept = " Your earlier edit is still kept: /checkpoint edit opens it again; save it empty to drop it."
	}
	switch {
	case msg.err != nil:
		name, args := editorCommand()
		m.say(m.sty.failed.Render(fmt.Sprintf("the editor (%s) failed: %v; VISUAL or EDITOR names the one to use. The checkpoint is unchanged.",
			strings.Join(append([]string{name}, args...), " "), msg.err)) + m.sty.dim.Render(kept))
		return nil
	case err != nil:
		m.say(m.sty.failed.Render("could not read the edited checkpoint: " + err.Error()))
		return nil
	case len(bytes.TrimSpace(doc)) == 0:
		delete(m.checkpointDrafts, msg.session)
		if msg.draft {
			m.say(m.sty.dim.Render("The file was saved empty: your kept edit is dropped, and the checkpoint is unchanged."))
		} else {
			m.say(m.sty.dim.Render("The file was saved empty: nothing was saved, and the checkpoint is unchanged."))
		}
		return nil
	case bytes.Equal(bytes.TrimSpace(doc), bytes.TrimSpace(msg.inForce)):
		delete(m.checkpointDrafts, msg.session)
		m.say(m.sty.dim.Render("The checkpoint is unchanged: nothing was saved."))
		return nil
	case statErr == nil && !written(msg.openedInfo, info) && bytes.Equal(doc, msg.opened):
		m.say(m.sty.dim.Render("The editor quit without saving: nothing was sent." + kept))
		return nil
	}
	m.busy = "checkpoint"
	m.refresh()
	return func() tea.Msg {
		// Base: the daemon refuses the save when a compaction or another window wrote a newer checkpoint meanwhile.
		err := m.client.Call(m.ctx, "alisio/setCheckpoint", api.SetCheckpointParams{SessionRef: api.SessionRef{Session: msg.session},
			Checkpoint: jsonString(doc), Base: msg.base}, nil)
		return checkpointSavedMsg{session: msg.session, base: msg.base, doc: doc, err: err}
	}
}

// written reports whether the file opened as before was written since: replaced (an editor that saves by
// renaming a new file over it) or modified.
func written(before, after os.FileInfo) bool {
	return !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) || after.Size() != before.Size()
}

// checkpointSaved says how the save went; a refused edit is kept for the next /checkpoint edit.
func (m *model) checkpointSaved(msg checkpointSavedMsg) {
	m.busy, m.adopt = "", true
	if msg.err != nil {
		draft := checkpointDraft{doc: msg.doc, base: msg.base}
		if re := (*RequestError)(nil); errors.As(msg.err, &re) && re.Kind() == api.KindCheckpointChanged {
			draft.base = re.ErrorData().Checkpoint // the one the refusal showed
		}
		m.checkpointDrafts[msg.session] = draft
		m.say(m.sty.failed.Render(errorText(msg.err)) + "\n" + m.sty.dim.Render("Your edit is kept: /checkpoint edit opens it again to mend it (save it empty to drop it)."))
		return
	}
	delete(m.checkpointDrafts, msg.session)
	m.say("✔ Checkpoint saved: the next request sends it. /undo puts back the one before.")
}

// editorCommand is the user's editor ($VISUAL, else $EDITOR, else the system's own), split into its name and
// arguments ("code --wait").
func editorCommand() (string, []string) {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if f := strings.Fields(os.Getenv(v)); len(f) > 0 {
			return f[0], f[1:]
		}
	}
	return defaultEditor, nil
}

// when is " on DATE" for a checkpoint's creation time ("" when unknown).
func when(createdAt string) string {
	if len(createdAt) < len("2006-01-02") {
		return ""
	}
	return " on " + strings.Replace(createdAt[:min(len(createdAt), len("2006-01-02T15:04"))], "T", " at ", 1)
}

// jsonString is text as a JSON string: the edited document goes to the daemon as typed, so that a document
// that is not JSON gets the daemon's own words for what is wrong.
func jsonString(text []byte) json.RawMessage {
	b, _ := json.Marshal(string(text))
	return b
}
