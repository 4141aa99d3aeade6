package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/alisio-lsp/alisio-lsp/api"
	"github.com/alisio-lsp/alisio-lsp/config"
	"github.com/alisio-lsp/alisio-lsp/server/shared"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

// schemaVersion is the "v" field of every JSON line the CLI prints.
const schemaVersion = api.SchemaVersion

// app holds the global flags and what they open.
type app struct {
	dataDir, configPath, logFile, logLevel string
	jsonOut                                bool

	stdin          io.Reader
	stdout, stderr io.Writer
	log            *zap.Logger
	cfg            config.Config
	cfgErr         error // why the configuration file was not used (serve and daemon only)
	// cwd is where relative paths and the default workspace are taken from: the process's directory, or,
	// for a command the shared daemon runs for a CLI, that CLI's.
	cwd string
	// store, when set, is the shared daemon's own store: commands use it instead of opening the data
	// directory's (which the daemon holds); daemonDataDir is that daemon's data directory.
	store         *storage.Store
	daemonDataDir string
	// args are the command line, passed to the shared daemon when it holds the store, with standard input
	// when readsStdin says the command reads it.
	args       []string
	readsStdin bool
	// logSink is where this process's logs go when --log-file names a file; remoteLog, set for a command the
	// shared daemon runs for a CLI, is where that command's logs go instead (back to the CLI, which writes
	// them to its own --log-file: the daemon never opens a file a request names).
	logSink   io.Writer
	remoteLog io.Writer
	// startupProblem is what went wrong before the logs were set up (hiding the environment's secrets),
	// logged as a warning once they are.
	startupProblem error
}

// newRootCommand builds the command tree; the app it returns reports the error Execute returns (fail).
func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) (*cobra.Command, *app) {
	cwd, _ := os.Getwd()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, log: zap.NewNop(), cwd: cwd}
	root := &cobra.Command{
		Use:   "alisio-lsp",
		Short: "AI coding-agent daemon with context compaction, and its session tools",
		Long: "alisio-lsp runs beside the editor over stdio JSON-RPC (no subcommand, or 'serve') and keeps the\n" +
			"agent's conversation inside the model's context window by compaction. The subcommands inspect,\n" +
			"import, export, measure and compact stored sessions.",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.setup(cmd) },
		RunE:              func(cmd *cobra.Command, _ []string) error { return a.forward(cmd.Context()) },
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	f := root.PersistentFlags()
	f.StringVar(&a.dataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/alisio or ~/.local/share/alisio)")
	f.StringVar(&a.configPath, "config", "", "JSON configuration file (see README, Configuration)")
	f.BoolVar(&a.jsonOut, "json", false, `print results and events as JSON Lines, each with "v":1`)
	f.StringVar(&a.logFile, "log-file", "", "write logs to this file (default stderr; logs never go to stdout)")
	f.StringVar(&a.logLevel, "log-level", "warn", "log level: debug, info, warn, error")
	root.AddCommand(a.serveCommand(), a.versionCommand(), a.sessionsCommand(), a.compactCommand(), a.checkpointCommand(), a.contextCommand(), a.promptCommand(), a.chatCommand(), a.toolsCommand(), a.memoriesCommand(), a.daemonCommand())
	root.Version = version()
	root.SetVersionTemplate(fmt.Sprintf("alisio-lsp {{.Version}} (store format %d)\n", storage.FormatVersion))
	for _, c := range root.Commands() {
		if c.HasSubCommands() {
			requireSubcommand(c)
		}
	}
	return root, a
}

// requireSubcommand makes group, a command that only holds subcommands ("sessions"), fail on a word that
// names none ("sessions lst"), with the nearest names as a hint, instead of printing its help and succeeding.
func requireSubcommand(group *cobra.Command) {
	group.SuggestionsMinimumDistance = 2
	group.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("%s needs a subcommand: %s (--help says what each does)", cmd.CommandPath(), subcommandNames(cmd))
		}
		hint := ""
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %s?", strings.Join(s, " or "))
		}
		return fmt.Errorf("unknown command %q for %s%s (its subcommands: %s)", args[0], cmd.CommandPath(), hint, subcommandNames(cmd))
	}
	group.RunE = func(*cobra.Command, []string) error { return nil } // reached only when Args let it through
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// exitCode is a command's exit status when its output already said what went wrong: a command the shared
// daemon ran, a skipped compaction (its event line), or the daemon itself, which leaves with the code LSP gives
// it (0 included). main exits with it after every deferred cleanup ran.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// path resolves a path of the command line against the command's directory.
func (a *app) path(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.cwd, p)
}

// workspaceDir is the workspace a --workspace flag names, as an absolute, clean path resolved against the
// caller's directory (also when the command runs inside the shared daemon); empty names the caller's directory.
func (a *app) workspaceDir(flag string) string {
	if flag == "" {
		return filepath.Clean(a.cwd)
	}
	return filepath.Clean(a.path(flag))
}

// oneArg requires the one argument a command's usage names (SESSION, FILE, ID) and says what is missing.
func oneArg(cmd *cobra.Command, args []string) error {
	name := "argument"
	if fields := strings.Fields(cmd.Use); len(fields) > 1 {
		name = fields[1]
	}
	switch {
	case len(args) == 0:
		return fmt.Errorf("missing %s: usage: %s", name, cmd.UseLine())
	case len(args) > 1:
		return fmt.Errorf("%s takes one %s, not %d arguments (%s)", cmd.CommandPath(), name, len(args), strings.Join(args, " "))
	}
	return nil
}

// withSession runs fn with an open store and the session arg names (see resolveSession).
func (a *app) withSession(ctx context.Context, arg string, fn func(st *storage.Store, id string) error) error {
	return a.withStore(ctx, func(st *storage.Store) error {
		id, err := resolveSession(st, arg)
		if err != nil {
			return err
		}
		return fn(st, id)
	})
}

// resolveSession is the ID of the session arg names: its full ID, or the start of one that no other session
// shares (the first characters `sessions list` shows are enough).
func resolveSession(st *storage.Store, arg string) (string, error) {
	if strings.TrimSpace(arg) == "" {
		return "", errors.New("the session ID is empty: give one (alisio-lsp sessions list shows them; the first characters are enough)")
	}
	_, err := st.Session(arg)
	if err == nil || !errors.Is(err, storage.ErrNotFound) || arg == "" {
		return arg, err
	}
	all, lerr := st.Sessions("")
	if lerr != nil {
		return "", lerr
	}
	var matches []string
	for _, s := range all {
		if strings.HasPrefix(s.ID, arg) {
			matches = append(matches, s.ID)
		}
	}
	switch len(matches) {
	case 0:
		return "", err
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%d sessions start with %s (%s): give more of the ID", len(matches), arg, strings.Join(matches, ", "))
}

// fail reports a command's error: with --json as a JSON line on stdout ({"v":1,"type":"error","error":…}),
// where a program reading the output looks, else as text on stderr.
func (a *app) fail(err error) {
	var remote exitCode
	if errors.As(err, &remote) {
		return
	}
	data, sentence := api.Explain(err, api.ShellWords(a.cli()))
	// --json also holds for errors found before the flags were read (an unknown command).
	if (a.jsonOut || slices.Contains(a.args, "--json")) && a.emit("error", map[string]any{"error": sentence, "data": data}) == nil {
		return
	}
	fmt.Fprintf(a.stderr, "alisio-lsp: %s\n", sentence)
}

// setup reads the configuration and starts logging. The servers an editor starts (serve, the shared daemon)
// start even when the configuration file is invalid: with the defaults, and the error shown in the editor,
// which hides their stderr.
func (a *app) setup(cmd *cobra.Command) error {
	level, err := zapcore.ParseLevel(a.logLevel)
	if err != nil {
		return fmt.Errorf("--log-level %q: use debug, info, warn or error", a.logLevel)
	}
	// Logs on stderr are lines for people ("WARN  what happened  {details}"); a --log-file gets JSON.
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	encoder := zapcore.NewJSONEncoder(enc)
	sink := zapcore.Lock(zapcore.AddSync(a.stderr))
	switch {
	case a.logFile != "" && a.remoteLog != nil:
		sink = zapcore.Lock(zapcore.AddSync(a.remoteLog))
	case a.logFile != "":
		f, err := os.OpenFile(a.path(a.logFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("opening --log-file: %w", err)
		}
		a.logSink = f
		sink = zapcore.Lock(f)
	default:
		enc.TimeKey, enc.CallerKey = "", ""
		enc.EncodeLevel = zapcore.CapitalLevelEncoder
		encoder = zapcore.NewConsoleEncoder(enc)
	}
	a.log = zap.New(zapcore.NewCore(encoder, sink, level))
	if a.startupProblem != nil {
		a.log.Warn("API keys stay readable by other processes of the user", zap.Error(a.startupProblem))
	}
	if a.cfg, err = a.loadConfig(); err != nil {
		if name := cmd.Name(); name != "serve" && name != "daemon" && cmd.HasParent() {
			return err
		}
		a.log.Warn("invalid configuration file; running with the defaults", zap.Error(err))
		a.cfg, a.cfgErr = config.Default(), err
	}
	a.dataDir = a.path(a.dataDir) // relative paths are the caller's, also inside the shared daemon
	if a.dataDir == "" {
		a.dataDir = a.cfg.DataDir
	}
	if a.daemonDataDir != "" {
		// Inside the shared daemon: the command uses the daemon's store, never another data directory.
		if dir, err := storage.DataDir(a.dataDir); err != nil || filepath.Clean(dir) != filepath.Clean(a.daemonDataDir) {
			return fmt.Errorf("the shared daemon of %s cannot run a command for the data directory %s", a.daemonDataDir, dir)
		}
		a.log.Debug("running a command for a command line", zap.String("command", cmd.CommandPath()), zap.String("dir", a.cwd))
	}
	return nil
}

// loadConfig reads the --config file over the defaults.
func (a *app) loadConfig() (config.Config, error) { return config.Load(a.path(a.configPath)) }

// openStore opens the session store of the data directory.
func (a *app) openStore() (*storage.Store, error) {
	dir, err := storage.DataDir(a.dataDir)
	if err != nil {
		return nil, err
	}
	a.log.Debug("opening session store", zap.String("dataDir", dir))
	return storage.OpenDataDir(dir, storage.DefaultOptions("").WithLogger(a.log))
}

// sharedStartWait bounds the wait of a command for a shared daemon that holds the store but does not answer
// yet (starting, or stopping).
const sharedStartWait = 15 * time.Second

// ownerGrace is how long a command waits on a locked store with no shared daemon recorded as its owner before
// it says that another process holds it.
const ownerGrace = 2 * time.Second

// withStore runs fn with an open store and closes it, keeping fn's error first.
func (a *app) withStore(ctx context.Context, fn func(*storage.Store) error) (err error) {
	if a.store != nil {
		return fn(a.store)
	}
	st, err := a.openStore()
	// The shared daemon holds the store: it runs the command. While one starts (or a stopping one lets go of
	// the store), the command waits for it rather than failing on the lock.
	// A daemon that is starting may hold the store a moment before it records itself as the owner: only an
	// owner missing for ownerGrace means a private daemon holds it.
	ownerSeen := time.Now()
	for deadline := time.Now().Add(sharedStartWait); errors.Is(err, storage.ErrLocked) && a.args != nil; {
		dir, _ := storage.DataDir(a.dataDir)
		var stdin io.Reader
		if a.readsStdin {
			stdin = a.stdin
		}
		if code, ok := shared.RunRemote(ctx, dir, a.args, a.cwd, stdin, version(), a.stdout, a.stderr, a.logSink); ok {
			return exitCode(code)
		}
		if shared.OwnerRunning(dir) {
			ownerSeen = time.Now()
		}
		if time.Since(ownerSeen) > ownerGrace || time.Now().After(deadline) {
			break // a private daemon holds the store: the lock error says which
		}
		time.Sleep(100 * time.Millisecond)
		st, err = a.openStore()
	}
	if err != nil {
		return err
	}
	defer func() {
		cerr := st.Close()
		switch {
		case errors.Is(cerr, storage.ErrDiskFull):
			// The command's work is saved (its journal is read at the next start): a warning, not a failure.
			fmt.Fprintln(a.stderr, "warning:", cerr)
			a.log.Warn("closing the session store", zap.Error(cerr))
		case err == nil:
			err = cerr
		}
	}()
	return fn(st)
}

// emit prints one JSON line with the schema version and the given type and fields.
func (a *app) emit(typ string, fields map[string]any) error {
	line := map[string]any{"v": schemaVersion}
	if typ != "" {
		line["type"] = typ
	}
	for k, v := range fields {
		line[k] = v
	}
	return a.emitValue(line)
}

// emitValue prints v, which carries its own "v" and "type" (an api.Event), as one JSON line.
func (a *app) emitValue(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (a *app) printf(format string, args ...any) { fmt.Fprintf(a.stdout, format, args...) }

// releaseVersion is set by scripts/release.sh (-ldflags -X main.releaseVersion=VERSION).
var releaseVersion string

func version() string {
	if releaseVersion != "" {
		return releaseVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if a.jsonOut {
				return a.emit("version", map[string]any{"version": version(), "storeFormat": storage.FormatVersion})
			}
			a.printf("alisio-lsp %s (store format %d)\n", version(), storage.FormatVersion)
			return nil
		},
	}
}
