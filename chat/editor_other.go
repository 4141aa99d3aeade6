//go:build !windows

package chat

// defaultEditor edits the checkpoint when neither VISUAL nor EDITOR names an editor.
const defaultEditor = "vi"
