// Package tools holds the agent's built-in tools. File tools act only inside the workspace root: they go
// through os.Root, which refuses any path that escapes it (.., absolute paths, symlinks pointing out).
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/alisio-lsp/alisio-lsp/agent/provider"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

// Limits bound what tools return and how long commands run.
type Limits struct {
	// OutputChars caps every tool result (head and tail kept). Default 30000.
	OutputChars int
	// CommandTimeout is the default and MaxCommandTimeout the largest timeout of run_command.
	CommandTimeout    time.Duration
	MaxCommandTimeout time.Duration
	// Shell is what runs commands on Windows: "" or "cmd" (cmd.exe), or "powershell". Unix uses /bin/sh.
	Shell string
}

// DefaultLimits are the limits used when none are set.
func DefaultLimits() Limits {
	return Limits{OutputChars: 30_000, CommandTimeout: 60 * time.Second, MaxCommandTimeout: 10 * time.Minute}
}

// FileUse reports a file a tool read or edited (for the relevant-files ranking).
type FileUse struct {
	Path   string
	Edited bool
}

// Set is the tool catalog of one workspace.
type Set struct {
	root *os.Root
	dir  string
	// held is the workspace directory as opened at the start: commands are confined to it, and refused once
	// dir no longer leads to it (moved, or replaced by a symlink).
	held *os.File
	// realDir is dir with its symlinks resolved, to recognise absolute links that point back inside.
	realDir string
	limits  Limits
	tools   map[string]*tool
	order   []string
	// OnFile, when set, is told about every file a tool read or edited.
	OnFile func(FileUse)
	// Recall answers the recall tool (the agent reads the session's compacted messages from its store).
	Recall Recaller
	// RequireSandbox refuses to run commands where the sandbox is unavailable instead of running them
	// unconfined.
	RequireSandbox bool
	// DaemonSocket is the shared daemon's socket, which commands may not connect to where the sandbox can say
	// so by path (macOS); on Linux the daemon refuses them itself.
	DaemonSocket string

	// sources are the tool sources beyond the built-ins (MCP servers), replaced whole by SetSources while
	// turns may be running; owner maps each of their tool names to its source.
	srcMu   sync.RWMutex
	sources []Source
	owner   map[string]Source

	// outputChars, when set, is the cap on tool results in force, which follows the model's window (see
	// SetOutputChars); else limits.OutputChars.
	outputChars atomic.Int64
}

// SetOutputChars sets the cap on every tool result from the next call on (0: back to Limits.OutputChars).
// The agent sizes it from the model's window, so that a small window is not filled by a few reads.
func (s *Set) SetOutputChars(n int) { s.outputChars.Store(int64(n)) }

// OutputChars is the cap on tool results in force.
func (s *Set) OutputChars() int {
	if n := s.outputChars.Load(); n > 0 {
		return int(n)
	}
	return s.limits.OutputChars
}

// Source is a provider of tools beyond the built-ins: an MCP server. Its tool names are unique in the
// catalog (prefixed with the source's name), and Call reports failures as results the model can read.
type Source interface {
	Name() string
	Specs() []provider.ToolSpec
	Call(ctx context.Context, tool, arguments string) (result string, isError bool)
}

// SetSources replaces the sources beyond the built-ins (enabling or disabling MCP servers applies live). A
// tool whose name a built-in or an earlier source already has is left out.
func (s *Set) SetSources(sources []Source) {
	owner := map[string]Source{}
	for _, src := range sources {
		for _, t := range src.Specs() {
			if _, builtin := s.tools[t.Name]; !builtin && owner[t.Name] == nil {
				owner[t.Name] = src
			}
		}
	}
	s.srcMu.Lock()
	s.sources, s.owner = sources, owner
	s.srcMu.Unlock()
}

type tool struct {
	spec   provider.ToolSpec
	schema *jsonschema.Schema
	run    func(ctx context.Context, args map[string]any) (string, error)
}

// New opens the workspace at dir and builds the built-in tools.
func New(dir string, limits Limits) (*Set, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", dir, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("opening workspace %s: %w", abs, err)
	}
	realDir, err := filepath.EvalSymlinks(abs)
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("opening workspace %s: %w", abs, err)
	}
	held, err := os.Open(abs)
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("opening workspace %s: %w", abs, err)
	}
	s := &Set{root: root, dir: abs, held: held, realDir: realDir, limits: limits, tools: map[string]*tool{}}
	for _, t := range []struct {
		name, desc, params string
		run                func(ctx context.Context, args map[string]any) (string, error)
	}{
		{"read_file", "Read a text file of the workspace, optionally a range of lines (1-based, inclusive). A long file comes back as its first and last lines with a note naming the lines left out: read those with startLine and endLine.",
			`{"type":"object","properties":{"path":{"type":"string","description":"path relative to the workspace root"},"startLine":{"type":"integer","minimum":1},"endLine":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`, s.readFile},
		{"list_dir", "List a directory of the workspace (directories end with /).",
			`{"type":"object","properties":{"path":{"type":"string","description":"path relative to the workspace root; . for the root"}},"required":["path"],"additionalProperties":false}`, s.listDir},
		{"search", "Search the workspace's text files for a regular expression; returns path:line: text.",
			`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"directory to search, default ."}},"required":["pattern"],"additionalProperties":false}`, s.search},
		{"write_file", "Create or overwrite a file of the workspace with the given content.",
			`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`, s.writeFile},
		{"edit_file", "Replace one exact occurrence of oldText with newText in a file of the workspace.",
			`{"type":"object","properties":{"path":{"type":"string"},"oldText":{"type":"string","minLength":1},"newText":{"type":"string"}},"required":["path","oldText","newText"],"additionalProperties":false}`, s.editFile},
		{"run_command", "Run a command with " + shellDescription(limits.Shell) + " in the workspace root with a timeout; returns its exit code and output. " + endsWithIt(),
			`{"type":"object","properties":{"command":{"type":"string","minLength":1},"timeoutSeconds":{"type":"integer","minimum":1}},"required":["command"],"additionalProperties":false}`, s.runCommand},
		{RecallTool, recallDescription, recallParams, s.recall},
	} {
		if err := s.add(t.name, t.desc, t.params, t.run); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

func (s *Set) add(name, desc, params string, run func(context.Context, map[string]any) (string, error)) error {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(params))
	if err != nil {
		return fmt.Errorf("tool %s schema: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(name+".json", doc); err != nil {
		return err
	}
	sch, err := c.Compile(name + ".json")
	if err != nil {
		return fmt.Errorf("tool %s schema: %w", name, err)
	}
	s.tools[name] = &tool{spec: provider.ToolSpec{Name: name, Description: desc, Parameters: json.RawMessage(params)}, schema: sch, run: run}
	s.order = append(s.order, name)
	return nil
}

// Close releases the workspace.
func (s *Set) Close() error { return errors.Join(s.root.Close(), s.held.Close()) }

// stillTheWorkspace fails when the workspace path no longer leads to the directory the session opened.
func (s *Set) stillTheWorkspace() error {
	was, err := s.held.Stat()
	if err != nil {
		return fmt.Errorf("the workspace folder %s: %w", s.dir, err)
	}
	if now, err := os.Stat(s.dir); err != nil || !os.SameFile(was, now) {
		return fmt.Errorf("the workspace folder %s was moved or replaced (by a symbolic link, say) since the session started, so commands are refused: "+
			"put the folder back, or reopen the project", s.dir)
	}
	return nil
}

// Dir is the workspace root.
func (s *Set) Dir() string { return s.dir }

// Specs returns the catalog sent to the model, in a stable order: the built-ins, then each source's tools.
func (s *Set) Specs() []provider.ToolSpec {
	out := make([]provider.ToolSpec, len(s.order))
	for i, n := range s.order {
		out[i] = s.tools[n].spec
	}
	s.srcMu.RLock()
	defer s.srcMu.RUnlock()
	for _, src := range s.sources {
		for _, t := range src.Specs() {
			if s.owner[t.Name] == src {
				out = append(out, t)
			}
		}
	}
	return out
}

// CatalogChars is the size of the serialized catalog (toolsText, TC1).
func (s *Set) CatalogChars() int {
	raw, _ := json.Marshal(s.Specs())
	return utf8.RuneCount(raw)
}

// SourceSummary is one origin of tools in the catalog and its share of it.
type SourceSummary struct {
	Source string   `json:"source"`
	Count  int      `json:"count"`
	Chars  int      `json:"chars"`
	Tools  []string `json:"tools"`
	// Problem says what is wrong with the source (a server that did not start, tools left out).
	Problem string `json:"problem,omitempty"`
}

// What no system confines, and the limit of path-based confinement, in the words of Confinement.
const (
	unconfined = "it can read every file the user can, reach the network and signal the user's other processes"
	// unconfinedScoped is what stays open where Landlock also scopes signals and abstract sockets.
	unconfinedScoped = "it can read every file the user can and reach the network, but not signal processes it did not start"
	pathLimit        = ", which checks paths: a hard link already in the workspace to a file outside lets a command write that file"
)

// Description is what the user is shown of the catalog (alisio/tools, alisio-lsp tools): each source's tools
// and size (TC1), and what confines run_command on this system.
type Description struct {
	Sources      []SourceSummary `json:"sources"`
	CatalogChars int             `json:"catalogChars"`
	Confinement  string          `json:"confinement"`
}

// Describe describes the catalog, source by source.
func (s *Set) Describe() Description {
	builtin := make([]provider.ToolSpec, len(s.order))
	for i, n := range s.order {
		builtin[i] = s.tools[n].spec
	}
	d := Description{Sources: []SourceSummary{summarize("built-in", builtin)}, Confinement: Confinement(s.dir)}
	s.srcMu.RLock()
	for _, src := range s.sources {
		var mine []provider.ToolSpec
		for _, t := range src.Specs() {
			if s.owner[t.Name] == src {
				mine = append(mine, t)
			}
		}
		sum := summarize(src.Name(), mine)
		if p, ok := src.(interface{ Problem() string }); ok {
			sum.Problem = p.Problem()
		}
		d.Sources = append(d.Sources, sum)
	}
	s.srcMu.RUnlock()
	d.CatalogChars = s.CatalogChars()
	return d
}

func summarize(source string, specs []provider.ToolSpec) SourceSummary {
	raw, _ := json.Marshal(specs)
	sum := SourceSummary{Source: source, Count: len(specs), Chars: utf8.RuneCount(raw), Tools: []string{}}
	if len(specs) == 0 {
		sum.Chars = 0
	}
	for _, t := range specs {
		sum.Tools = append(sum.Tools, t.Name)
	}
	return sum
}

// Run executes one call. Every failure — unknown tool, invalid arguments, a path outside the workspace, a
// command that fails — comes back as a result the model can read, with isError set.
func (s *Set) Run(ctx context.Context, name, arguments string) (result string, isError bool) {
	t, ok := s.tools[name]
	if !ok {
		s.srcMu.RLock()
		src := s.owner[name]
		s.srcMu.RUnlock()
		if src != nil {
			out, isErr := src.Call(ctx, name, arguments)
			return capOutput(out, s.OutputChars()), isErr
		}
		var names []string
		for _, t := range s.Specs() {
			names = append(names, t.Name)
		}
		return fmt.Sprintf("Error: unknown tool %q. Available tools: %s.", name, strings.Join(names, ", ")), true
	}
	args, err := t.decode(name, arguments)
	if err != nil {
		return "Error: " + err.Error(), true
	}
	out, err := t.run(ctx, args)
	if cf := (*commandFailed)(nil); errors.As(err, &cf) {
		return capOutput(cf.output, s.OutputChars()), true
	}
	if err != nil {
		return "Error: " + err.Error(), true
	}
	return capOutput(out, s.OutputChars()), false
}

// decode checks arguments against the tool's schema and returns them as an object.
func (t *tool) decode(name, arguments string) (map[string]any, error) {
	var args map[string]any
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return nil, fmt.Errorf("the arguments of %s are not a JSON object: %v", name, err)
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(arguments))
	if err := t.schema.Validate(inst); err != nil {
		return nil, fmt.Errorf("invalid arguments for %s: %v", name, oneLine(err))
	}
	return args, nil
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", "; ")), " ")
}

// capOutput keeps the head and the tail of s when it is longer than limit chars.
func capOutput(s string, limit int) string {
	if limit <= 0 {
		return s
	}
	count := utf8.RuneCountInString(s)
	if count <= limit {
		return s
	}
	head := limit * 2 / 3
	tail := limit - head
	return s[:runeOffset(s, head)] + fmt.Sprintf("\n[… %d characters omitted …]\n", count-limit) + s[runeOffset(s, count-tail):]
}

// runeOffset is the byte offset of the n-th character of s (len(s) past its end), found without copying s.
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// maxHitChars bounds the text of one search hit: a minified file's single line is not the model's to read
// whole from a search.
const maxHitChars = 300

// hitText is a matching line as a search shows it: trimmed, and cut to maxHitChars with a marker.
func hitText(line []byte) string {
	line = bytes.TrimSpace(line)
	if utf8.RuneCount(line) <= maxHitChars {
		return strings.ToValidUTF8(string(line), "�")
	}
	cut := runeOffset(string(line[:min(len(line), 4*maxHitChars)]), maxHitChars)
	return strings.ToValidUTF8(string(line[:cut]), "�") + fmt.Sprintf(" [… %d more bytes on this line: read_file shows it]", len(line)-cut)
}

// shownName is a file name as the tools print it: quoted when it holds a line break or another control
// character, so that one name never reads as two.
func shownName(name string) string {
	for _, r := range name {
		if unicode.IsControl(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

// path checks the path argument key given by the model and returns it as the model wrote it (for messages)
// and as os.Root should open it: absolute symlinks are refused by os.Root even when they point back inside
// the workspace, so a path through one is resolved to the same place inside the root. os.Root still refuses
// anything that leads out.
func (s *Set) path(args map[string]any, key string) (shown, open string, err error) {
	shown, err = rel(args, key)
	if err != nil {
		return "", "", err
	}
	return shown, s.resolve(shown), nil
}

// resolve returns p, or the workspace-relative path of what it points to when that is inside the workspace.
func (s *Set) resolve(p string) string {
	real, err := filepath.EvalSymlinks(filepath.Join(s.dir, p))
	if err != nil {
		// p may not exist yet (a file to write): resolve its directory.
		dir, derr := filepath.EvalSymlinks(filepath.Join(s.dir, filepath.Dir(p)))
		if derr != nil {
			return p
		}
		real = filepath.Join(dir, filepath.Base(p))
	}
	r, err := filepath.Rel(s.realDir, real)
	if err != nil || climbsOut(r) {
		return p // outside: os.Root refuses it with its own error
	}
	return filepath.ToSlash(r)
}

// climbsOut reports whether the relative path p leads above its base ("..", "../x", and "..\x" on Windows).
func climbsOut(p string) bool {
	return p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, ".."+string(filepath.Separator))
}

// rel checks a path given by the model and returns it relative to the root; os.Root enforces the rest.
func rel(args map[string]any, key string) (string, error) {
	p, _ := args[key].(string)
	if p == "" {
		p = "."
	}
	// Rooted paths count as absolute everywhere: on Windows, /etc or \Windows lack only a drive letter.
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("%s is an absolute path; use a path relative to the workspace root", p)
	}
	clean := filepath.Clean(p)
	if climbsOut(clean) {
		return "", fmt.Errorf("%s is outside the workspace; tools act only inside the workspace root", p)
	}
	return filepath.ToSlash(clean), nil
}

// explain rewords os.Root's refusals.
func explain(p string, err error) error {
	if err != nil && strings.Contains(err.Error(), "escapes") {
		return fmt.Errorf("%s leads outside the workspace (through a symlink); tools act only inside the workspace root", p)
	}
	if errors.Is(err, fs.ErrNotExist) { // the same words on every system ("File not found." on Windows)
		return fmt.Errorf("%s: no such file or directory; list_dir shows what exists", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", p, pe.Err)
	}
	return err
}

func (s *Set) note(p string, edited bool) {
	if s.OnFile != nil {
		s.OnFile(FileUse{Path: p, Edited: edited})
	}
}

// maxFileBytes is the largest file the tools read; larger ones are refused rather than loaded into memory.
const maxFileBytes = 32 << 20

// readText reads the text file the "path" argument names.
func (s *Set) readText(args map[string]any) (path string, text []byte, err error) {
	p, at, err := s.path(args, "path")
	if err != nil {
		return "", nil, err
	}
	info, err := s.root.Stat(at)
	if err != nil {
		return "", nil, explain(p, err)
	}
	if info.IsDir() {
		return "", nil, fmt.Errorf("%s is a directory; use list_dir", p)
	}
	if !info.Mode().IsRegular() {
		return "", nil, notRegular(p, info)
	}
	if info.Size() > maxFileBytes {
		return "", nil, fmt.Errorf("%s is %d MB, over the %d MB the tools read; use search or run_command (head, grep) on it", p, info.Size()>>20, maxFileBytes>>20)
	}
	raw, err := s.root.ReadFile(at)
	if err != nil {
		return "", nil, explain(p, err)
	}
	if !utf8.Valid(raw) || bytes.IndexByte(raw, 0) >= 0 {
		return "", nil, fmt.Errorf("%s is not a text file (%d bytes)", p, len(raw))
	}
	return p, raw, nil
}

func (s *Set) readFile(_ context.Context, args map[string]any) (string, error) {
	p, raw, err := s.readText(args)
	if err != nil {
		return "", err
	}
	s.note(p, false)
	lines := strings.SplitAfter(string(raw), "\n")
	if lines[len(lines)-1] == "" { // the text after the last line break: no line
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return "", nil
	}
	start, end := intArg(args, "startLine", 1), intArg(args, "endLine", len(lines))
	if start > len(lines) {
		return "", fmt.Errorf("%s has %d lines; startLine %d is past the end", p, len(lines), start)
	}
	end = min(end, len(lines))
	if end < start {
		return "", fmt.Errorf("endLine %d is before startLine %d", end, start)
	}
	return capLines(lines[start-1:end], start, len(lines), s.OutputChars()), nil
}

// capLines joins lines (the first is line first of a file of total lines) when they fit in limit chars;
// else it keeps whole lines from the head (two thirds) and the tail, and says which lines it left out and
// how to read them. A file of few, huge lines is cut by chars instead.
func capLines(lines []string, first, total, limit int) string {
	text := strings.Join(lines, "")
	if limit <= 0 || utf8.RuneCountInString(text) <= limit {
		return text
	}
	budget := limit - 200 // room for the note
	head, used := 0, 0
	for head < len(lines) && used+utf8.RuneCountInString(lines[head]) <= budget*2/3 {
		used += utf8.RuneCountInString(lines[head])
		head++
	}
	tail := len(lines)
	for tail > head && used+utf8.RuneCountInString(lines[tail-1]) <= budget {
		used += utf8.RuneCountInString(lines[tail-1])
		tail--
	}
	if head == 0 || tail == len(lines) {
		return text // capOutput cuts it by chars
	}
	from, to := first+head, first+tail-1
	omitted := utf8.RuneCountInString(text) - used
	next := fmt.Sprintf("read_file with startLine %d and endLine %d shows them", from, to)
	if omitted > limit { // more than one read returns whole: name the first range that does
		n, size := head, 0
		for n < tail && size+utf8.RuneCountInString(lines[n]) <= limit {
			size += utf8.RuneCountInString(lines[n])
			n++
		}
		if n > head {
			next = fmt.Sprintf("a read returns about %d chars whole, so read_file with startLine %d and endLine %d shows the first of them, and so on",
				limit, from, first+n-1)
		}
	}
	return strings.Join(lines[:head], "") +
		fmt.Sprintf("[… lines %d–%d of %d left out (%d chars) to save the context window; %s …]\n", from, to, total, omitted, next) +
		strings.Join(lines[tail:], "")
}

func intArg(args map[string]any, key string, def int) int {
	if v, ok := args[key].(float64); ok {
		return int(v)
	}
	return def
}

func (s *Set) listDir(_ context.Context, args map[string]any) (string, error) {
	p, at, err := s.path(args, "path")
	if err != nil {
		return "", err
	}
	entries, err := fs.ReadDir(s.root.FS(), filepath.ToSlash(at))
	if err != nil {
		return "", explain(p, err)
	}
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(shownName(e.Name()))
		if e.IsDir() {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return b.String(), nil
}

var skipDirs = map[string]bool{".git": true, "node_modules": true, "vendor": true}

func (s *Set) search(ctx context.Context, args map[string]any) (string, error) {
	p, at, err := s.path(args, "path")
	if err != nil {
		return "", err
	}
	if _, err := s.root.Stat(at); err != nil {
		return "", explain(p, err)
	}
	re, err := regexp.Compile(args["pattern"].(string))
	if err != nil {
		return "", fmt.Errorf("invalid pattern: %v", err)
	}
	var hits []string
	const maxHits = 200
	err = fs.WalkDir(s.root.FS(), filepath.ToSlash(at), func(path string, d fs.DirEntry, err error) error {
		if err != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() {
			if skipDirs[d.Name()] && path != filepath.ToSlash(at) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > maxFileBytes {
			return nil
		}
		raw, err := fs.ReadFile(s.root.FS(), path)
		if err != nil || bytes.IndexByte(raw, 0) >= 0 {
			return nil
		}
		for i := 1; len(raw) > 0; i++ {
			line := raw
			if end := bytes.IndexByte(raw, '\n'); end >= 0 {
				line, raw = raw[:end], raw[end+1:]
			} else {
				raw = nil
			}
			if re.Match(line) {
				hits = append(hits, fmt.Sprintf("%s:%d: %s", shownName(path), i, hitText(line)))
				if len(hits) >= maxHits {
					return fs.SkipAll
				}
			}
		}
		return nil
	})
	if err != nil {
		return "", explain(p, err)
	}
	sort.Strings(hits)
	if len(hits) == 0 {
		return "no matches", nil
	}
	return strings.Join(hits, "\n"), nil
}

func (s *Set) writeFile(_ context.Context, args map[string]any) (string, error) {
	w, err := s.planWrite(args)
	if err != nil {
		return "", err
	}
	if dir := filepath.Dir(w.at); dir != "." {
		if err := s.root.MkdirAll(dir, 0o755); err != nil {
			return "", explain(w.Path, err)
		}
	}
	if err := s.writeAtomic(w.at, w.After, w.perm); err != nil {
		return "", explain(w.Path, err)
	}
	s.note(w.Path, true)
	return fmt.Sprintf("wrote %s (%d bytes)", w.Path, len(w.After)), nil
}

// planWrite is what write_file would write, and where, without writing.
func (s *Set) planWrite(args map[string]any) (plannedWrite, error) {
	p, at, err := s.path(args, "path")
	if err != nil {
		return plannedWrite{}, err
	}
	if err := s.singleLink(p, at); err != nil {
		return plannedWrite{}, err
	}
	w := plannedWrite{Change: Change{Path: p}, at: at, perm: 0o644}
	content := args["content"].(string)
	if info, err := s.root.Stat(at); err == nil {
		w.perm, w.Existed = info.Mode().Perm(), true
		if info.IsDir() {
			return plannedWrite{}, fmt.Errorf("%s is a directory", p)
		}
		if old, err := s.root.ReadFile(at); err == nil {
			w.Before = old
			if usesCRLF(old) {
				content = toCRLF(content) // an existing file keeps its line endings
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return plannedWrite{}, explain(p, err) // a symlink leading out: refused, never replaced
	}
	w.After = []byte(content)
	return w, nil
}

// singleLink refuses to write a file that has other hard links: they may be outside the workspace, and
// writing would change them too.
func (s *Set) singleLink(p, at string) error {
	if info, err := s.root.Stat(at); err == nil && !info.Mode().IsRegular() && !info.IsDir() {
		return notRegular(p, info) // opening a FIFO would block the turn
	}
	info, err := s.root.Lstat(at)
	if err != nil || !info.Mode().IsRegular() {
		return nil // a new file, or not a file to write
	}
	f, err := s.root.Open(at)
	if err != nil {
		return explain(p, err)
	}
	defer f.Close()
	if n, err := osproc.LinkCount(f); err == nil && n > 1 {
		return fmt.Errorf("%s has %d hard links, which may be outside the workspace, and writing it would change them all; refusing (copy it to a new file first if that is what you want)", p, n)
	}
	return nil
}

func (s *Set) editFile(_ context.Context, args map[string]any) (string, error) {
	w, err := s.planEdit(args)
	if err != nil {
		return "", err
	}
	if err := s.writeAtomic(w.at, w.After, w.perm); err != nil {
		return "", explain(w.Path, err)
	}
	s.note(w.Path, true)
	return "edited " + w.Path, nil
}

// planEdit is what edit_file would write, and where, without writing.
func (s *Set) planEdit(args map[string]any) (plannedWrite, error) {
	p, raw, err := s.readText(args)
	if err != nil {
		return plannedWrite{}, err
	}
	oldText, newText := args["oldText"].(string), args["newText"].(string)
	if usesCRLF(raw) { // the model writes \n; the file keeps its \r\n
		oldText, newText = toCRLF(oldText), toCRLF(newText)
	}
	switch n := strings.Count(string(raw), oldText); n {
	case 0:
		return plannedWrite{}, fmt.Errorf("oldText was not found in %s; read the file and copy the exact text", p)
	case 1:
	default:
		return plannedWrite{}, fmt.Errorf("oldText occurs %d times in %s; include more context so that it is unique", n, p)
	}
	at := s.resolve(p)
	info, err := s.root.Stat(at)
	if err != nil {
		return plannedWrite{}, explain(p, err)
	}
	if err := s.singleLink(p, at); err != nil {
		return plannedWrite{}, err
	}
	return plannedWrite{Change: Change{Path: p, Existed: true, Before: raw, After: []byte(strings.Replace(string(raw), oldText, newText, 1))},
		at: at, perm: info.Mode().Perm()}, nil
}

func (s *Set) runCommand(ctx context.Context, args map[string]any) (string, error) {
	timeout := s.limits.CommandTimeout
	if v, ok := args["timeoutSeconds"].(float64); ok {
		timeout = min(time.Duration(v)*time.Second, s.limits.MaxCommandTimeout)
	}
	if err := s.stillTheWorkspace(); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := s.shellCommand(ctx, args["command"].(string))
	cmd.Dir = s.dir
	cmd.Env = append(SafeEnv(os.Environ()), "PWD="+s.dir)
	cmd.WaitDelay = 2 * time.Second
	// The output goes to a pipe this process reads into a bounded buffer: Wait returns when the command
	// exits, even if something it left behind holds the pipe, and memory stays bounded whatever it writes.
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("running the command: %w", err)
	}
	defer r.Close()
	out := newBoundedOutput(4 * max(s.OutputChars(), 1000))
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, r)
		close(copied)
	}()
	cmd.Stdout, cmd.Stderr = w, w
	err = s.runContained(cmd) // the command's process group (job) is gone when it returns
	_ = w.Close()
	select {
	case <-copied:
	case <-time.After(2 * time.Second): // a process that left the group still holds the pipe
		_ = r.Close()
	}
	text := strings.ToValidUTF8(out.String(), "�")
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("the command did not finish within %v and was killed; output so far:\n%s", timeout, capOutput(text, s.OutputChars()/2))
	case ctx.Err() != nil:
		return "", fmt.Errorf("the command was cancelled")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return "", fmt.Errorf("running the command: %v", err)
	}
	result := fmt.Sprintf("exit code %d\n%s", code, text)
	if code != 0 {
		return "", &commandFailed{result}
	}
	return result, nil
}

// commandFailed is a command that ran and exited non-zero: its output is the call's result, marked as an error
// so that the model and the editors see the failure.
type commandFailed struct{ output string }

func (e *commandFailed) Error() string { return e.output }

// usesCRLF reports whether text ends its lines with \r\n (its first line ending decides).
func usesCRLF(text []byte) bool {
	i := bytes.IndexByte(text, '\n')
	return i > 0 && text[i-1] == '\r'
}

// toCRLF ends every line of s with \r\n.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

// notRegular refuses a FIFO, socket or device: reading or writing one would block the turn or touch a device.
func notRegular(p string, info fs.FileInfo) error {
	kind := "special file"
	switch m := info.Mode(); {
	case m&fs.ModeNamedPipe != 0:
		kind = "FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeDevice != 0:
		kind = "device"
	}
	return fmt.Errorf("%s is a %s, not a regular file; the file tools read and write only regular files", p, kind)
}

// writeAtomic replaces the file at (in the workspace) with data: written to a temporary file beside it, synced,
// given perm, then renamed over it. A failure (a full disk) leaves the original untouched.
func (s *Set) writeAtomic(at string, data []byte, perm fs.FileMode) error {
	tmp := filepath.Join(filepath.Dir(at), fmt.Sprintf(".%s.alisio-%d.tmp", filepath.Base(at), time.Now().UnixNano()))
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Chmod(tmp, perm) // the umask does not decide an existing file's mode
	}
	if err == nil {
		err = s.root.Rename(tmp, at)
	}
	if err != nil {
		_ = s.root.Remove(tmp)
	}
	s.removeStaleTemps(at)
	return err
}

// staleTemp is the age past which a temporary file of writeAtomic belongs to no write still running: one a
// crash (or a killed daemon) left between its creation and its rename.
const staleTemp = time.Minute

// removeStaleTemps removes the temporary files earlier writes of at left behind.
func (s *Set) removeStaleTemps(at string) {
	dir := filepath.ToSlash(filepath.Dir(at))
	matches, _ := fs.Glob(s.root.FS(), path.Join(dir, "."+globEscape(filepath.Base(at))+".alisio-*.tmp"))
	for _, m := range matches {
		if info, err := s.root.Lstat(m); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleTemp {
			_ = s.root.Remove(m)
		}
	}
}

// globEscape makes name match only itself in a glob pattern.
func globEscape(name string) string {
	var b strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
