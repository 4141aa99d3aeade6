package chat

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// Command is one line the user sent: a prompt (Name "") or a slash command and what follows its name.
type Command struct {
	Name string
	Arg  string
}

// commandHelp are the slash commands, after the product document's terminal UI, with what each does.
var commandHelp = []struct{ name, usage, help string }{
	{"compact", "/compact [focus]", "compact the conversation now; the focus steers what the checkpoint keeps"},
	{"undo", "/undo", "undo the last compaction (again: the one before)"},
	{"context", "/context", "what fills the context: its parts, and the meter"},
	{"checkpoint", "/checkpoint [edit]", "the checkpoint in force; edit opens it as JSON in $VISUAL or $EDITOR, and what you save there replaces it (/undo puts the one before back)"},
	{"memories", "/memories [delete N|ID]", "what the memory plugin saved for this workspace (new sessions start with it); delete one by its number or ID"},
	{"mcps", "/mcps", "the MCP servers and their tools"},
	{"plugins", "/plugins [enable|disable NAME]", "the compaction plugins; turn one on or off for this chat"},
	{"settings", "/settings [KEY [VALUE]]", "the settings in force and what this chat changed; set one (/settings limits.maxContextChars 60000), or drop the change (KEY alone)"},
	{"sessions", "/sessions [N|ID]", "the workspace's sessions; switch to one by its number or ID"},
	{"new", "/new", "start a new session"},
	{"recover", "/recover [acknowledge]", "list tool calls a crash left uncertain; acknowledge records that their outcome is unknown"},
	{"help", "/help", "this list; Enter sends, Alt+Enter or Ctrl+J starts a new line, ↑/↓ the input history, PgUp/PgDn scroll, Ctrl-C stops the turn (twice: leave)"},
	{"exit", "/exit", "leave (the session stays; `alisio-lsp chat` continues it)"},
}

// ParseCommand reads what the user sent. A line that starts with one slash is a command; "//" sends the rest
// of the line, with one slash, as a prompt. An unknown command is an error naming the nearest one.
func ParseCommand(line string) (Command, error) {
	text := strings.TrimSpace(line)
	switch {
	case text == "":
		return Command{}, fmt.Errorf("nothing to send: type a message, or /help")
	case strings.HasPrefix(text, "//"):
		return Command{Arg: strings.TrimRight(line, " \t\r\n")[strings.Index(line, "/")+1:]}, nil
	case !strings.HasPrefix(text, "/"):
		return Command{Arg: strings.TrimRight(line, " \t\r\n")}, nil
	}
	name, arg, _ := strings.Cut(text[1:], " ")
	name = strings.ToLower(strings.TrimSpace(name))
	for _, c := range commandHelp {
		if c.name == name {
			arg = strings.TrimSpace(arg)
			if arg != "" && !strings.Contains(c.usage, " ") {
				// A command that takes nothing would run without the words the user added, which they meant.
				return Command{}, fmt.Errorf("%s takes nothing after it (%q was given; /help lists the commands)", c.usage, arg)
			}
			return Command{Name: name, Arg: arg}, nil
		}
	}
	if name == "quit" {
		return Command{Name: "exit"}, nil
	}
	hint := ""
	if near := nearestCommand(name); near != "" {
		hint = fmt.Sprintf("; did you mean /%s?", near)
	}
	return Command{}, fmt.Errorf("unknown command /%s%s (/help lists them; start with // to send a line that begins with /)", name, hint)
}

// nearestCommand is the command whose name is closest to name (at most 2 edits, or a prefix), "" when none is.
func nearestCommand(name string) string {
	best, bestDist := "", 3
	for _, c := range commandHelp {
		d := editDistance(name, c.name)
		if name != "" && strings.HasPrefix(c.name, name) {
			d = 1
		}
		if d < bestDist {
			best, bestDist = c.name, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// helpView is /help at width: the commands' usages in a column, what each does beside it, wrapped within its
// own column (under a narrow width, below the usage, indented).
func helpView(width int) string {
	const usageWidth = 32
	rows := []string{lipgloss.NewStyle().Width(max(20, width)).Render("Commands (Enter sends; a line starting with // is sent as a message):")}
	for _, c := range commandHelp {
		if width < usageWidth+30 {
			rows = append(rows, c.usage, lipgloss.NewStyle().PaddingLeft(4).Width(max(20, width)).Render(c.help))
			continue
		}
		usage := lipgloss.NewStyle().Width(usageWidth + 1).Render(c.usage)
		rows = append(rows, lipgloss.JoinHorizontal(lipgloss.Top, usage, lipgloss.NewStyle().Width(width-usageWidth-1).Render(c.help)))
	}
	return strings.Join(rows, "\n")
}

// Overrides are the settings the chat changed, by dotted key ("limits.maxContextChars"): sent to the daemon as
// the client's alisio settings over the config file, as an editor's settings are.
type Overrides map[string]any

// Set records key = value; value is read as JSON (60000, true, 0.7, ["a"]) and else taken as text. An empty
// value drops the key.
func (o Overrides) Set(key, value string) error {
	key = strings.TrimSpace(key)
	if key == "" || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") || strings.Contains(key, "..") {
		return fmt.Errorf("a setting is named by its path in the config, as limits.maxContextChars or compaction.threshold")
	}
	value = strings.TrimSpace(value)
	if value == "" {
		delete(o, key)
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(value), &v); err != nil {
		v = value
	}
	o[key] = v
	return nil
}

// JSON is the overrides as the nested object the config file would hold.
func (o Overrides) JSON() json.RawMessage {
	root := map[string]any{}
	for _, key := range o.Keys() {
		node := root
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			next, ok := node[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				node[p] = next
			}
			node = next
		}
		node[parts[len(parts)-1]] = o[key]
	}
	raw, _ := json.Marshal(root)
	return raw
}

// Keys are the overridden keys, sorted.
func (o Overrides) Keys() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeSettings is over laid on base, two JSON objects of settings: an object in both is merged key by key,
// any other value of over replaces base's. An empty base gives over.
func mergeSettings(base, over json.RawMessage) json.RawMessage {
	var b, o map[string]any
	if json.Unmarshal(base, &b) != nil || b == nil {
		return over
	}
	if json.Unmarshal(over, &o) != nil {
		return base
	}
	raw, _ := json.Marshal(mergeObjects(b, o))
	return raw
}

func mergeObjects(base, over map[string]any) map[string]any {
	for k, v := range over {
		if bo, ok := base[k].(map[string]any); ok {
			if oo, ok := v.(map[string]any); ok {
				base[k] = mergeObjects(bo, oo)
				continue
			}
		}
		base[k] = v
	}
	return base
}
