package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/storage"
	"github.com/alisio-lsp/alisio-lsp/transcript"
	"github.com/alisio-lsp/alisio-lsp/transcript/formats"
)

func (a *app) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "sessions", Short: "list, show, import, export and delete stored sessions"}
	cmd.AddCommand(a.sessionsListCommand(), a.sessionsShowCommand(), a.sessionsDeleteCommand(),
		a.sessionsImportCommand(), a.sessionsExportCommand(), a.sessionsGenerateCommand(), a.sessionsRecoverCommand())
	return cmd
}

func (a *app) sessionsListCommand() *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list sessions, most recently updated first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(contextOf(cmd), func(st *storage.Store) error {
				filter := ""
				if workspace != "" {
					filter = a.workspaceDir(workspace)
				}
				ss, err := st.Sessions(filter)
				if err != nil {
					return err
				}
				for _, s := range ss {
					if a.jsonOut {
						if err := a.emit("session", sessionFields(s)); err != nil {
							return err
						}
						continue
					}
					a.printf("%s  %s  %6d msgs  %-30s %s\n", s.ID, s.UpdatedAt.Local().Format("2006-01-02 15:04"),
						s.Head.ViewLen, clip(s.Title, 30), s.Workspace)
				}
				if len(ss) == 0 && !a.jsonOut {
					if _, err := os.Stat(filter); filter != "" && err != nil {
						a.printf("no sessions for the workspace %s, a folder that does not exist (alisio-lsp sessions list shows every workspace's)\n", filter)
					} else if filter != "" {
						a.printf("no sessions for the workspace %s (alisio-lsp sessions list shows every workspace's)\n", filter)
					} else {
						a.printf("no sessions in %s (import one with: alisio-lsp sessions import FILE)\n", st.Dir())
					}
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "only sessions of this workspace root")
	return cmd
}

func sessionFields(s storage.Session) map[string]any {
	return map[string]any{"id": s.ID, "title": s.Title, "workspace": s.Workspace, "model": s.Model,
		"createdAt": s.CreatedAt, "updatedAt": s.UpdatedAt, "messages": s.Head.ViewLen}
}

// showChunk is how many messages `sessions show --limit 0` reads at a time while it prints them.
const showChunk = 1000

func (a *app) sessionsShowCommand() *cobra.Command {
	var all bool
	var offset, limit int
	cmd := &cobra.Command{
		Use:   "show SESSION",
		Short: "show a session's last messages (--all: of the full history, compacted messages included)",
		Long: "show a session: its size, then its last 200 messages. --offset and --limit choose another window\n" +
			"(--offset 0 --limit 50: the first 50); --limit 0 prints every message, read and printed a page at a time.",
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if offset < 0 {
				return fmt.Errorf("--offset %d: messages are numbered from 0", offset)
			}
			if limit < 0 {
				return fmt.Errorf("--limit %d: give how many messages to show, or 0 for every one", limit)
			}
			if !cmd.Flags().Changed("offset") {
				offset = -1 // the last --limit messages
			}
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				return a.showSession(st, id, all, offset, limit)
			})
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "list the full history, compacted messages included (the audit history)")
	cmd.Flags().IntVar(&offset, "offset", 0, "first message to show, numbered from 0 (without it: the last --limit messages)")
	cmd.Flags().IntVar(&limit, "limit", 200, "how many messages to show; 0 shows every one")
	return cmd
}

// showSession prints the session's meter, then its messages from offset (negative: the last limit), reading
// at most showChunk of them at a time, so that a session of any length prints in bounded memory.
func (a *app) showSession(st *storage.Store, id string, all bool, offset, limit int) error {
	s, err := st.Session(id)
	if err != nil {
		return err
	}
	chars, uncertain := s.Head.Totals.Chars, append([]string{}, s.Head.Totals.Open...)
	total := s.Head.ViewLen
	if all {
		total = int(s.Head.NextSeq)
	}
	from, n := storage.PageBounds(total, offset, limit)
	// Counted as the daemon sends it: the agent's instructions and tool catalog too, as `context` counts.
	sz := agent.NewContextManager(st, a.cfg, a.cwd, compaction.Offline{}).Sizes(s, chars)
	if a.jsonOut {
		f := sessionFields(s)
		f["transcriptChars"], f["instructionsChars"], f["toolsChars"] = chars, sz.Instructions, sz.Tools
		f["estimatedTokens"] = transcript.EstimateTokens(sz.Request())
		f["uncertainCalls"] = uncertain
		f["offset"], f["total"] = from, total
		if err := a.emit("session", f); err != nil {
			return err
		}
	} else {
		a.printf("session    %s\ntitle      %s\nworkspace  %s\nupdated    %s\n", s.ID, s.Title, s.Workspace, s.UpdatedAt.Local().Format(time.RFC3339))
		a.printf("transcript %d messages\nsize       %s\n", s.Head.ViewLen, sizeLine(sz))
		if len(uncertain) > 0 {
			a.printf("uncertain  %s without a result: %s (the session is not compacted until they are recovered)\n",
				api.Count(len(uncertain), "tool call", "tool calls"), strings.Join(uncertain, ", "))
		}
		switch {
		case n == 0 && total > 0:
			a.printf("showing    no messages: --offset %d is past the last one (%d messages, numbered from 0)\n", offset, total)
		case n < total:
			a.printf("showing    %d of %d messages, %d–%d (numbered from 0; --offset and --limit show others, --limit 0 every one)\n",
				n, total, from, from+n-1)
		}
		a.printf("\n")
	}
	for pos := from; pos < from+n; {
		page, err := st.ReadPage(id, all, pos, min(from+n-pos, showChunk))
		if err != nil {
			return err
		}
		if len(page.Messages) == 0 {
			break
		}
		for i := range page.Messages {
			if err := a.showMessage(pos+i, &page.Messages[i]); err != nil {
				return err
			}
		}
		pos += len(page.Messages)
	}
	return nil
}

// showMessage prints message m, at position i of the listing, as one line (or one JSON record).
func (a *app) showMessage(i int, m *transcript.Message) error {
	if a.jsonOut {
		return a.emit("message", map[string]any{"index": i, "message": m, "chars": m.Chars()})
	}
	a.printf("%5d %-9s %-20s %7d  %s\n", i, m.Role, flags(m), m.Chars(), preview(m))
	return nil
}

func flags(m *transcript.Message) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{m.Summary, "checkpoint"}, {m.Partial, "partial"}, {m.Compacted && !m.Undone, "compacted"}, {m.Undone, "undone"}, {m.Truncated, "truncated"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	return strings.Join(f, ",")
}

func preview(m *transcript.Message) string {
	var b strings.Builder
	if m.ToolCallID != "" {
		fmt.Fprintf(&b, "[%s] ", m.ToolCallID)
	}
	b.WriteString(m.Text)
	for _, c := range m.ToolCalls {
		fmt.Fprintf(&b, " → %s(%s) [%s]", c.Name, c.Arguments, c.ID)
	}
	return clip(strings.Join(strings.Fields(b.String()), " "), 100)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func (a *app) sessionsDeleteCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "delete SESSION",
		Short: "delete a session and all its messages",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				if err := st.DeleteSession(id); err != nil {
					return err
				}
				if a.jsonOut {
					return a.emit("deleted", map[string]any{"session": id})
				}
				a.printf("deleted %s\n", id)
				return nil
			})
		},
	}
}

func (a *app) sessionsImportCommand() *cobra.Command {
	var format, workspace, title string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "create a session from an OpenAI or Anthropic transcript (FILE or - for stdin); prints its ID",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := formats.ParseFormat(format, true)
			if err != nil {
				return fmt.Errorf("--format: %w", err)
			}
			a.readsStdin = args[0] == "-"
			if workspace != "" {
				if info, err := os.Stat(a.workspaceDir(workspace)); err != nil || !info.IsDir() {
					return fmt.Errorf("--workspace %s is not a folder: give the folder the session's tools work in (it must exist)", workspace)
				}
			}
			ownStore := a.store == nil // not run by the shared daemon for this command
			return a.withStore(contextOf(cmd), func(st *storage.Store) error {
				if ownStore {
					defer softMemoryLimit(importMemoryLimit)()
				}
				in, closeInput, err := a.openInput(args[0])
				if err != nil {
					return err
				}
				defer closeInput()
				var im formats.Imported
				var n importCount
				sess, err := st.CreateSessionFrom(storage.Session{Title: title, Workspace: a.workspaceDir(workspace)},
					func(meta *storage.Session, add func(...transcript.Message) error) error {
						im, err = n.read(in, f, add)
						var invalid *formats.Error
						if errors.As(err, &invalid) {
							return fmt.Errorf("%s is not a valid transcript, nothing imported: %w", inputName(args[0]), err)
						}
						if err != nil {
							return err
						}
						meta.Instructions = im.Instructions
						if meta.Title == "" {
							meta.Title = importTitle(args[0], n.firstPrompt)
						}
						return nil
					})
				if err != nil {
					return err
				}
				a.reportSkipped(im.Skipped)
				if im.Compacted > 0 {
					fmt.Fprintf(a.stderr, "alisio-lsp: %s marked compacted (an export --all): imported as ordinary messages, so the new session's transcript is the whole history, checkpoints included; export without --all gives the transcript as it was sent\n", api.Count(im.Compacted, "message of the file is", "messages of the file are"))
				}
				if u := n.pending.Len(); u > 0 {
					fmt.Fprintf(a.stderr, "alisio-lsp: %s no result, so the outcome is unknown; recover before compacting\n", api.Count(u, "tool call has", "tool calls have"))
				}
				if n.messages == 0 {
					fmt.Fprintf(a.stderr, "alisio-lsp: %s holds no messages (besides instructions): the session starts empty\n", inputName(args[0]))
				}
				if a.jsonOut {
					return a.emit("", map[string]any{"session": sess.ID, "messages": n.messages})
				}
				a.printf("%s\n", sess.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "auto", "input format: auto, openai or anthropic")
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root the session belongs to (default: current directory)")
	cmd.Flags().StringVar(&title, "title", "", "session title (default: the file name)")
	return cmd
}

// maxSkippedNotes is how many skipped records an import names one by one; the rest are counted.
const maxSkippedNotes = 3

// reportSkipped says what an import skipped: the first few records by name, then how many more.
func (a *app) reportSkipped(skipped []string) {
	for i, s := range skipped {
		if i == maxSkippedNotes {
			fmt.Fprintf(a.stderr, "alisio-lsp: skipped %s of the same kinds\n", api.Count(len(skipped)-maxSkippedNotes, "more record", "more records"))
			return
		}
		fmt.Fprintf(a.stderr, "alisio-lsp: skipped %s\n", s)
	}
}

// importMemoryLimit is the soft memory limit of a process that imports a transcript into its own store. The
// importer holds one record at a time; what an import keeps live is the store's (Badger's memtables and the
// buffers of the tables it builds: 100–150 MB whatever the file's size), and without a limit the Go collector
// lets the heap grow to twice that between collections. With it a 145 MB import peaks at about 340 MB instead
// of 640 MB; a lower limit makes the collector run so often that the import takes longer than it saves.
const importMemoryLimit = 224 << 20

// softMemoryLimit sets the process's soft memory limit (runtime/debug.SetMemoryLimit) to n bytes, unless the
// user chose one with GOMEMLIMIT, and returns what restores the previous limit.
func softMemoryLimit(n int64) (restore func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	prev := debug.SetMemoryLimit(n)
	return func() { debug.SetMemoryLimit(prev) }
}

// importBatch is how many imported messages are staged at a time.
const importBatch = 256

// importCount is what an import learns from its messages as they pass to the store: their number, the
// calls left without a result and the first prompt.
type importCount struct {
	messages    int
	pending     *transcript.PendingCalls
	firstPrompt string
}

// read imports the transcript in r, passing its messages to add in batches. Decoding runs beside the
// writes (a goroutine decodes, the caller's writes), at most two batches ahead of them.
func (n *importCount) read(r io.Reader, f formats.Format, add func(...transcript.Message) error) (formats.Imported, error) {
	n.pending = transcript.NewPendingCalls()
	batches := make(chan []transcript.Message, 1)
	stop := make(chan struct{})
	var im formats.Imported
	var err error
	go func() {
		defer close(batches)
		batch := make([]transcript.Message, 0, importBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]transcript.Message, 0, importBatch)
				return nil
			case <-stop:
				return errors.New("import stopped")
			}
		}
		im, err = formats.ImportStream(r, f, func(m transcript.Message) error {
			n.messages++
			n.pending.Observe(&m)
			if n.firstPrompt == "" && m.StartsTurn() && strings.TrimSpace(m.Text) != "" {
				n.firstPrompt = m.Text
			}
			if batch = append(batch, m); len(batch) < importBatch {
				return nil
			}
			return send()
		})
		if err == nil && len(batch) > 0 {
			err = send()
		}
	}()
	var addErr error
	for b := range batches { // until the decoder is done: it has set im and err then
		if addErr == nil {
			if addErr = add(b...); addErr != nil {
				close(stop)
			}
		}
	}
	if addErr != nil {
		return im, addErr
	}
	return im, err
}

// openInput opens a transcript to read: the file name names, or standard input for "-".
func (a *app) openInput(name string) (io.Reader, func(), error) {
	if name == "-" {
		return a.stdin, func() {}, nil
	}
	f, err := os.Open(a.path(name))
	if err != nil {
		return nil, nil, fmt.Errorf("reading transcript: %w", err)
	}
	return f, func() { _ = f.Close() }, nil
}

func (a *app) sessionsExportCommand() *cobra.Command {
	var format string
	var all bool
	cmd := &cobra.Command{
		Use:   "export SESSION",
		Short: "print what the model would receive next as {\"messages\":[...]} (--all: the full history with flags)",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := formats.ParseFormat(format, false)
			if err != nil {
				return fmt.Errorf("--format: %w", err)
			}
			return a.withSession(contextOf(cmd), args[0], func(st *storage.Store, id string) error {
				v, msgs, err := st.Read(id, all)
				if err != nil {
					return err
				}
				return formats.Export(a.stdout, v.Session.Instructions, msgs, f, all)
			})
		},
	}
	cmd.Flags().StringVar(&format, "format", "openai", "output format: openai or anthropic")
	cmd.Flags().BoolVar(&all, "all", false, "export the full history, each message with an \"alisio\" field of flags")
	return cmd
}

// importTitle names an imported session: after its file, or for stdin after its first prompt.
func importTitle(file, firstPrompt string) string {
	if file != "-" {
		return filepath.Base(file)
	}
	if firstPrompt != "" {
		return agent.SessionTitle(firstPrompt)
	}
	return "Imported from standard input"
}

// inputName names an input file for the user: "-" is standard input.
func inputName(file string) string {
	if file == "-" {
		return "standard input"
	}
	return file
}
