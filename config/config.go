// Package config holds alisio's settings (SPEC §10): defaults, layered decoding (defaults ← config file ←
// editor settings), and validation whose errors name the field, the value and the allowed range.
package config

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config is the whole configuration.
type Config struct {
	Compaction  Compaction         `json:"compaction"`
	Limits      Limits             `json:"limits"`
	PluginHooks PluginHooks        `json:"pluginHooks"`
	Provider    Provider           `json:"provider"`
	Profiles    map[string]Profile `json:"profiles,omitempty"`
	// Plugins are external compaction hooks (docs/plugins.md); Memory the built-in memory plugin.
	Plugins []Plugin `json:"plugins,omitempty"`
	Memory  Memory   `json:"memory"`
	// MCPServers are MCP servers whose tools join the agent's catalog, by name.
	MCPServers map[string]MCPServer `json:"mcpServers,omitempty"`
	// Profile names the active entry of Profiles; its provider settings override Provider.
	Profile string `json:"profile,omitempty"`
	// DataDir overrides the per-user data directory (alisio.dataDir).
	DataDir string `json:"dataDir,omitempty"`
	// Tools configures the built-in tools.
	Tools Tools `json:"tools"`
	// ProjectRules are the workspace's rules for agents (AGENTS.md), sent with every request.
	ProjectRules ProjectRules `json:"projectRules"`
}

// ProjectRules say which file of the workspace holds its rules for agents and how much of it a request sends.
type ProjectRules struct {
	// Files are the candidates at the workspace root, the first that exists wins (default AGENTS.md, then
	// CLAUDE.md); an empty list turns the project rules off.
	Files []string `json:"files"`
	// MaxChars is the most of the file a request sends (default 32000, and never over a tenth of the hard limit).
	MaxChars int `json:"maxChars"`
}

// Tools configures the built-in tools.
type Tools struct {
	// Shell is what run_command runs commands with on Windows: "" (cmd.exe) or "powershell". Linux and macOS
	// use /bin/sh.
	Shell string `json:"shell,omitempty"`
	// Approval says which calls wait for the user's approval: "ask" (edits, writes and commands), "auto-edit"
	// (commands only), "auto" (none). Unset: "ask" for editors that answer approval requests, "auto" for other
	// clients (the CLI).
	Approval string `json:"approval,omitempty"`
	// ApprovalTimeoutSeconds is how long a call waits for the user's answer before it counts as declined
	// (default 600).
	ApprovalTimeoutSeconds int `json:"approvalTimeoutSeconds,omitempty"`
}

// Compaction configures when and how the conversation is compacted.
type Compaction struct {
	// Auto enables automatic compaction before model calls (A4). Default true.
	Auto bool `json:"auto"`
	// Threshold is the fraction of the window or of maxContextChars that triggers compaction. 0.1–0.99, default 0.85.
	Threshold float64 `json:"threshold"`
	// KeepTurns is how many recent turns are kept verbatim. 0–20, default 2.
	KeepTurns int `json:"keepTurns"`
	// MaxOutputTokens is the summarizer's own output budget (P1). Default 16000.
	MaxOutputTokens int `json:"maxOutputTokens"`
	// BackgroundAt is the fraction of the window (or of maxContextChars), below Threshold, at which the next
	// compaction's summary starts in the background, so that the compaction at Threshold need not wait for it.
	// 0 turns it off; default 0.6.
	BackgroundAt float64 `json:"backgroundAt"`
	// UserWords is the share of the hard limit a checkpoint may spend quoting the user's own messages word for
	// word, newest first. 0 turns it off; 0–0.5, default 0.1.
	UserWords float64 `json:"userWords"`
}

// Limits are the hard budgets of a session.
type Limits struct {
	// MaxContextChars is the character budget of instructions + transcript (A3, H1). Default 800000.
	MaxContextChars int `json:"maxContextChars"`
	// MaxOutputTokens is the agent loop's output budget per model call. Default 4096.
	MaxOutputTokens int `json:"maxOutputTokens"`
	// MaxTokens caps a session's total tokens; 0 means no cap.
	MaxTokens int `json:"maxTokens"`
	// MaxStepsPerTurn caps the model calls of one turn, so that a model asking for tool calls forever stops;
	// 0 means no cap. Default 100.
	MaxStepsPerTurn int `json:"maxStepsPerTurn"`
}

// Plugin is an external hook program: one process per hook call, JSON on stdin and stdout.
type Plugin struct {
	Name    string            `json:"name"`
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Disabled keeps the entry but does not run it.
	Disabled bool `json:"disabled,omitempty"`
}

// MCPServer is one MCP server: a program spoken to over stdio (Command, Args, Env) or a streamable HTTP
// endpoint (URL).
type MCPServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	// Disabled keeps the entry without starting the server; TimeoutMs bounds each call (default 60000).
	Disabled  bool `json:"disabled,omitempty"`
	TimeoutMs int  `json:"timeoutMs,omitempty"`
}

// Memory configures the built-in memory plugin (PH3).
type Memory struct {
	// Enabled saves durable memories at each compaction and starts new sessions with them. Default true.
	Enabled bool `json:"enabled"`
	// MaxChars bounds the memories a request sends: the newest that fit; the older ones stay stored (and
	// listed). Default 4000.
	MaxChars int `json:"maxChars"`
}

// PluginHooks configures compaction hooks.
type PluginHooks struct {
	// TimeoutMs bounds each hook. Default 5000.
	TimeoutMs int `json:"timeoutMs"`
}

// Provider says which model to talk to.
type Provider struct {
	// Kind is "openai" (any OpenAI-compatible server) or "anthropic". Empty: no provider (offline summarizer).
	Kind    string `json:"kind,omitempty"`
	BaseURL string `json:"baseURL,omitempty"`
	Model   string `json:"model,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key; the key itself is never stored.
	APIKeyEnv string `json:"apiKeyEnv,omitempty"`
	// ContextWindow in tokens; 0 means discover it.
	ContextWindow int `json:"contextWindow,omitempty"`
	// Responses selects the OpenAI Responses API.
	Responses bool `json:"responses,omitempty"`
	// ThinkingBudget enables Anthropic extended thinking with this many tokens (0: off; else 1024 or more).
	ThinkingBudget int `json:"thinkingBudget,omitempty"`
	// PromptCache is how requests use the provider's prompt cache: "5m" (the default: Anthropic cache_control
	// breakpoints with a 5-minute lifetime, OpenAI prompt_cache_key per session), "1h" (Anthropic breakpoints
	// that live an hour, written at twice the price), or "off" (neither is sent).
	PromptCache string `json:"promptCache,omitempty"`
}

// Profile is a named provider setup.
type Profile struct {
	Provider
	Values ProfileValues `json:"values,omitempty"`
}

// ProfileValues are per-profile facts about the model.
type ProfileValues struct {
	ContextWindow int `json:"contextWindow,omitempty"`
}

// Default returns the configuration used when nothing is set.
func Default() Config {
	return Config{
		Compaction:   Compaction{Auto: true, Threshold: 0.85, KeepTurns: 2, MaxOutputTokens: 16000, BackgroundAt: 0.8, UserWords: 0.1},
		ProjectRules: ProjectRules{Files: []string{"AGENTS.md", "CLAUDE.md"}, MaxChars: 32_000},
		Limits:       Limits{MaxContextChars: 800_000, MaxOutputTokens: 4096, MaxStepsPerTurn: 100},
		PluginHooks:  PluginHooks{TimeoutMs: 5000},
		Memory:       Memory{Enabled: true, MaxChars: 4000},
	}
}

// FieldError is a rejected setting.
type FieldError struct {
	Field string
	Value any
	Want  string
}

// Error names the field, the value and what is allowed.
func (e *FieldError) Error() string {
	return fmt.Sprintf("invalid setting %s: %v (allowed: %s)", e.Field, e.Value, e.Want)
}

// UnknownSettingError is a setting no configuration has: Path is the first unknown name with the path to it
// (a setting "bad.key" is refused as "bad").
type UnknownSettingError struct{ Path string }

// Error names the setting and where the known ones are listed.
func (e *UnknownSettingError) Error() string {
	return fmt.Sprintf("unknown setting %s (see the configuration reference in the README)", e.Path)
}

// Overlay decodes the JSON object raw over base: fields present in raw replace base's, others stay. Unknown
// fields, anything after the object and a value that is not an object are refused. Empty input or null
// changes nothing (an editor with no alisio settings). The result is validated; on error base is returned
// unchanged with the error.
func Overlay(base Config, raw []byte, source string) (Config, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return base, nil
	}
	next := base.clone()
	// Profiles are decoded one by one so that every error names its profile.
	var shape struct {
		*Config
		Profiles map[string]json.RawMessage `json:"profiles"`
	}
	shape.Config = &next
	if err := decodeStrict(raw, &shape, ""); err != nil {
		return base, fmt.Errorf("%s: %w", source, err)
	}
	for name, praw := range shape.Profiles {
		if next.Profiles == nil {
			next.Profiles = map[string]Profile{}
		}
		prof := next.Profiles[name]
		if err := decodeStrict(praw, &prof, "profiles."+name+"."); err != nil {
			return base, fmt.Errorf("%s: %w", source, err)
		}
		next.Profiles[name] = prof
	}
	if err := next.Validate(); err != nil {
		return base, fmt.Errorf("%s: %w", source, err)
	}
	return next, nil
}

// decodeStrict decodes the one JSON object of raw into v, refusing unknown fields and trailing data; errors
// name the field with prefix before it.
func decodeStrict(raw []byte, v any, prefix string) error {
	// raw itself is decoded, leading blank lines included, so that a syntax error's line is the file's.
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		where := "the settings"
		if prefix != "" {
			where = strings.TrimSuffix(prefix, ".")
		}
		return fmt.Errorf("%s must be a JSON object ({...}), not %s", where, clip(string(t)))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			if path := unknownField(raw, reflect.TypeOf(v)); path != "" {
				return &UnknownSettingError{Path: prefix + path}
			}
		}
		return explainDecode(err, prefix, raw)
	}
	if tok, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("unexpected %s after the JSON object: remove it (one JSON object is expected)", clip(fmt.Sprint(tok)))
	}
	// encoding/json matches names regardless of case: a name in another case ("baseUrl") is refused here.
	if path := unknownField(raw, reflect.TypeOf(v)); path != "" {
		return &UnknownSettingError{Path: prefix + path}
	}
	return nil
}

func (c Config) clone() Config {
	c.Plugins = append([]Plugin(nil), c.Plugins...)
	if c.MCPServers != nil {
		m := make(map[string]MCPServer, len(c.MCPServers))
		for k, v := range c.MCPServers {
			m[k] = v
		}
		c.MCPServers = m
	}
	if c.Profiles != nil {
		p := make(map[string]Profile, len(c.Profiles))
		for k, v := range c.Profiles {
			p[k] = v
		}
		c.Profiles = p
	}
	return c
}

func explainDecode(err error, prefix string, raw []byte) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// The path names embedded Go structs (Config, Provider) too: keep only the JSON names (lower case).
		var parts []string
		for _, part := range strings.Split(te.Field, ".") {
			if part != "" && !unicode.IsUpper([]rune(part)[0]) {
				parts = append(parts, part)
			}
		}
		field := prefix + strings.Join(parts, ".")
		// te.Value is the JSON kind given ("string"); said with its article, it does not read as the value.
		given := map[string]string{"string": "a string", "number": "a number", "bool": "true or false", "array": "an array", "object": "a JSON object"}[te.Value]
		return &FieldError{Field: field, Value: cmp.Or(given, te.Value), Want: kindName(te.Type)}
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		where := ""
		if prefix != "" {
			where = " in " + strings.TrimSuffix(prefix, ".")
		}
		return fmt.Errorf("unknown setting %s%s (see the configuration reference in the README)", msg, where)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		before := raw[:min(int(se.Offset), len(raw))]
		line := bytes.Count(before, []byte("\n")) + 1
		col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
		return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, strings.TrimPrefix(err.Error(), "json: "))
	}
	return err
}

// unknownField is the dotted path of the first key of raw that t (a struct, through pointers, maps and slices)
// has no field for, such as compaction.bogus or plugins[0].bogus; "" when every key is known.
func unknownField(raw []byte, t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, k := range sortedKeys(m) {
			if path := unknownField(m[k], t.Elem()); path != "" {
				return k + "." + path
			}
		}
	case reflect.Slice:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return ""
		}
		for i, item := range items {
			if path := unknownField(item, t.Elem()); path != "" {
				return fmt.Sprintf("[%d].%s", i, path)
			}
		}
	case reflect.Struct:
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return ""
		}
		for _, k := range sortedKeys(m) {
			field, ok := jsonField(t, k)
			if !ok {
				if near := nearField(t, k); near != "" {
					return k + " (did you mean " + near + "? setting names are case-sensitive)"
				}
				return k
			}
			if path := unknownField(m[k], field.Type); path != "" {
				if strings.HasPrefix(path, "[") {
					return k + path
				}
				return k + "." + path
			}
		}
	}
	return ""
}

// jsonField finds the field of struct t whose JSON name is exactly key (embedded structs included).
func jsonField(t reflect.Type, key string) (reflect.StructField, bool) {
	return findField(t, func(name string) bool { return name == key })
}

// nearField is the setting of struct t whose name differs from key only in case ("baseURL" for "baseUrl"),
// or "".
func nearField(t reflect.Type, key string) string {
	f, ok := findField(t, func(name string) bool { return strings.EqualFold(name, key) })
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

// findField is the exported field of struct t, or of a struct it embeds, whose JSON name matches.
func findField(t reflect.Type, match func(name string) bool) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if g, ok := findField(inner, match); ok {
					return g, true
				}
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name != "-" && f.IsExported() && match(name) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// kindName says in JSON words what a Go type accepts.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint, reflect.Uint64:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a JSON object"
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Load reads the config file at path (if path is not empty) over the defaults. An empty file or null is
// refused: a file that was named must say something.
func Load(path string) (Config, error) {
	c := Default()
	if path == "" {
		return c, nil
	}
	raw, err := readFile(path)
	if err != nil {
		return c, err
	}
	if t := string(bytes.TrimSpace(raw)); t == "" || t == "null" {
		return c, fmt.Errorf("%s: the config file is empty or null: write a JSON object, for example {\"provider\": {\"kind\": \"openai\", \"model\": \"...\"}}, or {} for the defaults", path)
	}
	return Overlay(c, raw, path)
}

// MaxFileBytes bounds a configuration file: far more than any configuration needs.
const MaxFileBytes = 1 << 20

// readFile reads the configuration file at path, which must be a regular file of at most MaxFileBytes (a
// device such as /dev/zero, a FIFO or a directory would hang or fail obscurely).
func readFile(path string) ([]byte, error) {
	info, err := os.Stat(path) // before opening: opening a FIFO waits for a writer
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("config file %s does not exist: check the --config path", path)
	case err != nil:
		return nil, fmt.Errorf("reading config file %s: %w", path, err)
	case info.IsDir():
		return nil, fmt.Errorf("config file %s is not a regular file but a directory: --config takes a JSON file", path)
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("config file %s is not a regular file but a device, pipe or socket: --config takes a JSON file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading config file: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading config file: %w", err)
	case len(raw) > MaxFileBytes:
		return nil, fmt.Errorf("config file %s is larger than %d KB, more than any configuration needs: is it the right file?", path, MaxFileBytes>>10)
	}
	return raw, nil
}

// Validate checks every range of SPEC §10.
func (c *Config) Validate() error {
	var errs []error
	check := func(ok bool, field string, v any, want string) {
		if !ok {
			errs = append(errs, &FieldError{Field: field, Value: v, Want: want})
		}
	}
	t := c.Compaction.Threshold
	check(t >= 0.1 && t <= 0.99, "compaction.threshold", t, "0.1–0.99")
	check(c.Compaction.KeepTurns >= 0 && c.Compaction.KeepTurns <= 20, "compaction.keepTurns", c.Compaction.KeepTurns, "0–20")
	check(c.ProjectRules.MaxChars >= 1000 && c.ProjectRules.MaxChars <= 1_000_000, "projectRules.maxChars", c.ProjectRules.MaxChars, "1000–1000000")
	for i, f := range c.ProjectRules.Files {
		check(f != "" && !filepath.IsAbs(f) && !slices.Contains(strings.Split(filepath.ToSlash(f), "/"), ".."), fmt.Sprintf("projectRules.files[%d]", i), quote(f),
			"a path inside the workspace, relative to its root, such as AGENTS.md or docs/AGENTS.md")
	}
	check(c.Compaction.UserWords >= 0 && c.Compaction.UserWords <= 0.5, "compaction.userWords", c.Compaction.UserWords, "0 (off) to 0.5")
	check(c.Compaction.BackgroundAt == 0 || c.Compaction.BackgroundAt >= 0.1 && c.Compaction.BackgroundAt <= 0.99, "compaction.backgroundAt",
		c.Compaction.BackgroundAt, "0 (off) or 0.1–0.99, below compaction.threshold to take effect")
	check(c.Compaction.MaxOutputTokens >= 256 && c.Compaction.MaxOutputTokens <= 1_000_000, "compaction.maxOutputTokens", c.Compaction.MaxOutputTokens, "256–1000000")
	check(c.Limits.MaxContextChars >= 4000 && c.Limits.MaxContextChars <= 100_000_000, "limits.maxContextChars", c.Limits.MaxContextChars, "4000–100000000")
	check(c.Limits.MaxOutputTokens >= 1 && c.Limits.MaxOutputTokens <= 1_000_000, "limits.maxOutputTokens", c.Limits.MaxOutputTokens, "1–1000000")
	check(c.Limits.MaxTokens >= 0, "limits.maxTokens", c.Limits.MaxTokens, "0 (no cap) or more")
	check(c.Limits.MaxStepsPerTurn >= 0 && c.Limits.MaxStepsPerTurn <= 100_000, "limits.maxStepsPerTurn", c.Limits.MaxStepsPerTurn, "0 (no cap) or 1–100000")
	check(c.Memory.MaxChars >= 1000 && c.Memory.MaxChars <= 100_000, "memory.maxChars", c.Memory.MaxChars, "1000–100000 (a memory holds up to 400)")
	check(c.PluginHooks.TimeoutMs >= 1 && c.PluginHooks.TimeoutMs <= 600_000, "pluginHooks.timeoutMs", c.PluginHooks.TimeoutMs, "1–600000")
	check(c.Provider.ContextWindow >= 0, "provider.contextWindow", c.Provider.ContextWindow, "0 (discover) or more")
	check(validKind(c.Provider.Kind), "provider.kind", quote(c.Provider.Kind), `"openai" or "anthropic"`)
	check(validEnvName(c.Provider.APIKeyEnv), "provider.apiKeyEnv", hiddenValue, apiKeyEnvWant)
	check(validBaseURL(c.Provider.BaseURL), "provider.baseURL", quote(c.Provider.BaseURL), "an http:// or https:// URL, such as http://localhost:8080/v1")
	check(validThinking(c.Provider.ThinkingBudget), "provider.thinkingBudget", c.Provider.ThinkingBudget, "0 (off) or 1024–1000000")
	check(validPromptCache(c.Provider.PromptCache), "provider.promptCache", quote(c.Provider.PromptCache), `"5m" (the default), "1h" or "off"`)
	for name, p := range c.Profiles {
		check(validKind(p.Kind), "profiles."+name+".kind", quote(p.Kind), `"openai" or "anthropic"`)
		check(validEnvName(p.APIKeyEnv), "profiles."+name+".apiKeyEnv", hiddenValue, apiKeyEnvWant)
		check(validThinking(p.ThinkingBudget), "profiles."+name+".thinkingBudget", p.ThinkingBudget, "0 (off) or 1024–1000000")
		check(validPromptCache(p.PromptCache), "profiles."+name+".promptCache", quote(p.PromptCache), `"5m" (the default), "1h" or "off"`)
		check(validBaseURL(p.BaseURL), "profiles."+name+".baseURL", quote(p.BaseURL), "an http:// or https:// URL, such as http://localhost:8080/v1")
		check(p.Values.ContextWindow >= 0, "profiles."+name+".values.contextWindow", p.Values.ContextWindow, "0 or more")
	}
	seen := map[string]bool{"memory": true}
	for i, p := range c.Plugins {
		field := fmt.Sprintf("plugins[%d]", i)
		check(p.Name != "" && !seen[p.Name], field+".name", quote(p.Name), `a name of its own (not empty, not "memory", not another plugin's)`)
		check(strings.TrimSpace(p.Command) != "", field+".command", quote(p.Command), "the program to run (a path, or a name on PATH)")
		seen[p.Name] = true
	}
	for name, m := range c.MCPServers {
		field := "mcpServers." + name
		check(validToolPrefix(name), field, quote(name), "a name of letters, digits, _ and - (up to 20), which prefixes its tools")
		check((m.Command == "") != (m.URL == ""), field, "command "+quote(m.Command)+", url "+quote(m.URL), "either command (stdio) or url (streamable HTTP)")
		check(validBaseURL(m.URL), field+".url", quote(m.URL), "an http:// or https:// URL")
		check(m.TimeoutMs >= 0 && m.TimeoutMs <= 3_600_000, field+".timeoutMs", m.TimeoutMs, "0 (default 60000) to 3600000")
	}
	check(c.Tools.Approval == "" || c.Tools.Approval == "ask" || c.Tools.Approval == "auto-edit" || c.Tools.Approval == "auto", "tools.approval", quote(c.Tools.Approval),
		`"ask" (edits and commands wait for you), "auto-edit" (commands wait) or "auto" (nothing waits)`)
	check(c.Tools.ApprovalTimeoutSeconds >= 0, "tools.approvalTimeoutSeconds", fmt.Sprint(c.Tools.ApprovalTimeoutSeconds), "a number of seconds, 0 for the default (600)")
	check(c.Tools.Shell == "" || c.Tools.Shell == "cmd" || c.Tools.Shell == "powershell", "tools.shell", quote(c.Tools.Shell), `"cmd" (the default) or "powershell" (Windows; Linux and macOS use /bin/sh)`)
	if c.Profile != "" {
		_, ok := c.Profiles[c.Profile]
		check(ok, "profile", quote(c.Profile), "the name of an entry of profiles")
	}
	return errors.Join(errs...)
}

func validKind(k string) bool { return k == "" || k == "openai" || k == "anthropic" }

func validBaseURL(s string) bool {
	if s == "" {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func validToolPrefix(name string) bool {
	if name == "" || len(name) > 20 {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func validPromptCache(s string) bool {
	return s == "" || s == "5m" || s == "1h" || s == "off"
}

func validThinking(budget int) bool { return budget == 0 || budget >= 1024 && budget <= 1_000_000 }

func quote(s string) string { return fmt.Sprintf("%q", s) }

// envName is the form of an environment variable's name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// validEnvName accepts an empty setting or the name of an environment variable. Anything else — most often an
// API key pasted where its variable's name belongs — is refused without being repeated (hiddenValue).
func validEnvName(s string) bool { return s == "" || envName.MatchString(s) }

// hiddenValue stands for a refused apiKeyEnv in messages and logs: it may be a key.
const hiddenValue = "(not shown: it is not a variable name and may be an API key)"

// apiKeyEnvWant says what apiKeyEnv takes.
const apiKeyEnvWant = "the NAME of the environment variable that holds the API key, such as OPENAI_API_KEY, never the key itself: export the key in that variable and put its name here"

// ActiveProvider is the provider in force: the active profile's when one is selected, else Provider. The
// returned window source says where ContextWindow came from ("config", "profile" or "" when unknown).
func (c *Config) ActiveProvider() (p Provider, windowSource string) {
	p = c.Provider
	if prof, ok := c.Profiles[c.Profile]; ok && c.Profile != "" {
		win := p.ContextWindow
		p = prof.Provider
		if win > 0 {
			p.ContextWindow = win
		}
		if p.ContextWindow == 0 && prof.Values.ContextWindow > 0 {
			p.ContextWindow = prof.Values.ContextWindow
			return p, "profile"
		}
	}
	if p.ContextWindow > 0 {
		return p, "config"
	}
	return p, ""
}
