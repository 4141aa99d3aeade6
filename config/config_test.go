package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDefaultIsValid(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if !c.Compaction.Auto || c.Compaction.Threshold != 0.85 || c.Compaction.KeepTurns != 2 ||
		c.Compaction.MaxOutputTokens != 16000 || c.Limits.MaxContextChars != 800000 || c.Limits.MaxOutputTokens != 4096 {
		t.Fatalf("defaults differ from SPEC §10: %+v", c)
	}
}

func TestOverlay_RejectsAndKeepsPrevious(t *testing.T) {
	base := Default()
	for _, tc := range []struct{ raw, want []string }{
		{[]string{`{"compaction":{"threshold":1.5}}`}, []string{"compaction.threshold", "1.5", "0.1–0.99"}},
		{[]string{`{"compaction":{"threshold":0.05}}`}, []string{"compaction.threshold", "0.05"}},
		{[]string{`{"compaction":{"keepTurns":21}}`}, []string{"compaction.keepTurns", "21", "0–20"}},
		{[]string{`{"compaction":{"keepTurns":-1}}`}, []string{"compaction.keepTurns", "-1"}},
		{[]string{`{"limits":{"maxContextChars":10}}`}, []string{"limits.maxContextChars", "10", "4000"}},
		{[]string{`{"compaction":{"treshold":0.5}}`}, []string{"unknown setting compaction.treshold"}},
		{[]string{`{"plugins":[{"name":"a","command":"x","bogus":2}]}`}, []string{"unknown setting plugins[0].bogus"}},
		{[]string{`{"mcpServers":{"fs":{"command":"x","nope":1}}}`}, []string{"unknown setting mcpServers.fs.nope"}},
		{[]string{`{"provider":{"model":"m","contextwindw":1}}`}, []string{"unknown setting provider.contextwindw"}},
		{[]string{`{"compaction":{"threshold":"high"}}`}, []string{"compaction.threshold", "string"}},
		{[]string{`{"provider":{"kind":"gemini"}}`}, []string{"provider.kind", `"gemini"`}},
		{[]string{`{"profile":"work"}`}, []string{"profile", `"work"`}},
		{[]string{`{"compaction":{"keepTurns":2}} trailing`}, []string{"after the JSON object"}},
		{[]string{`{"compaction":{"keepTurns":2}}{"limits":{}}`}, []string{"after the JSON object"}},
		{[]string{`[1,2]`}, []string{"must be a JSON object"}},
		{[]string{`{"compaction":{"keepTurns":"two"}}`}, []string{"compaction.keepTurns", "a whole number"}},
		{[]string{`{"tools":{"shell":"bash"}}`}, []string{"tools.shell", `"bash"`, "powershell"}},
		{[]string{`{"compaction":{"auto":"yes"}}`}, []string{"compaction.auto", "true or false"}},
		{[]string{`{"profiles":{"deep":{"kind":1}}}`}, []string{"profiles.deep.kind", "a string"}},
		{[]string{`{"profiles":{"deep":{"values":{"contextWindow":"big"}}}}`}, []string{"profiles.deep.values.contextWindow"}},
		{[]string{`{"profiles":{"deep":{"bogus":1}}}`}, []string{"unknown setting profiles.deep.bogus"}},
		{[]string{`{"provider":{"baseURL":"localhost:8080"}}`}, []string{"provider.baseURL", "http://"}},
		{[]string{`{"profiles":{"p":{"baseURL":"ftp://x"}}}`}, []string{"profiles.p.baseURL"}},
	} {
		got, err := Overlay(base, []byte(tc.raw[0]), "settings")
		if err == nil {
			t.Errorf("%s accepted", tc.raw[0])
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.raw[0], err, w)
			}
		}
		if got.Compaction != base.Compaction || got.Limits != base.Limits {
			t.Errorf("%s: a rejected overlay changed the configuration", tc.raw[0])
		}
	}
}

func TestOverlay_NoGoTypeNames(t *testing.T) {
	for _, raw := range []string{`{"compaction":{"threshold":"x"}}`, `{"limits":{"maxContextChars":1.5}}`, `{"compaction":{"auto":1}}`} {
		_, err := Overlay(Default(), []byte(raw), "settings")
		for _, goName := range []string{"float64", " int", "bool", "config.", "Provider"} {
			if err == nil || strings.Contains(err.Error(), goName) {
				t.Errorf("%s: error %v names a Go type", raw, err)
			}
		}
	}
	// The kind given is said as a kind, not as if it were the value typed.
	if _, err := Overlay(Default(), []byte(`{"compaction":{"threshold":"abc"}}`), "settings"); err == nil ||
		!strings.Contains(err.Error(), "compaction.threshold: a string (allowed: a number)") {
		t.Errorf("a string for a number: %v", err)
	}
}

func TestLoad_EmptyOrNullFileRefused(t *testing.T) {
	for _, content := range []string{"", "  \n", "null"} {
		file := filepath.Join(t.TempDir(), "alisio.json")
		if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "empty or null") {
			t.Errorf("%q: %v", content, err)
		}
	}
	// Editor settings may be null: nothing changes.
	if c, err := Overlay(Default(), []byte("null"), "editor"); err != nil || c.Limits != Default().Limits {
		t.Fatalf("null editor settings: %v", err)
	}
}

// TestLoad_OnlyARegularFileOfSaneSize: a device (--config /dev/zero used to hang), a directory and a file of
// megabytes are refused with a message naming the path.
func TestLoad_OnlyARegularFileOfSaneSize(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"x":"`+strings.Repeat("x", MaxFileBytes)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{big: "larger than 1024 KB", t.TempDir(): "not a regular file"}
	if runtime.GOOS != "windows" {
		cases["/dev/zero"] = "not a regular file"
	}
	for path, want := range cases {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestOverlay_Layers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "alisio.json")
	if err := os.WriteFile(file, []byte(`{"compaction":{"keepTurns":4},"limits":{"maxContextChars":100000}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err = Overlay(c, []byte(`{"limits":{"maxContextChars":50000},"compaction":{"auto":false}}`), "editor")
	if err != nil {
		t.Fatal(err)
	}
	if c.Compaction.KeepTurns != 4 || c.Limits.MaxContextChars != 50000 || c.Compaction.Auto || c.Compaction.Threshold != 0.85 {
		t.Fatalf("layers not merged: %+v", c)
	}
}

func TestActiveProvider_WindowSource(t *testing.T) {
	c := Default()
	if _, src := c.ActiveProvider(); src != "" {
		t.Fatalf("no window: source %q", src)
	}
	c, err := Overlay(c, []byte(`{"profile":"local","profiles":{"local":{"kind":"openai","model":"qwen","values":{"contextWindow":32768}}}}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	p, src := c.ActiveProvider()
	if p.Model != "qwen" || p.ContextWindow != 32768 || src != "profile" {
		t.Fatalf("profile window: %+v %q", p, src)
	}
	c.Provider.ContextWindow = 8192
	if p, src := c.ActiveProvider(); p.ContextWindow != 8192 || src != "config" {
		t.Fatalf("provider.contextWindow wins: %+v %q", p, src)
	}
}

// TestLoad_NamesAreExactAndSyntaxErrorsHaveALine: a setting in another case is refused with the right name as
// a hint (encoding/json alone would take it), and a syntax error says its line and column.
func TestLoad_NamesAreExactAndSyntaxErrorsHaveALine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{`{"provider": {"kind": "openai", "baseUrl": "http://x"}}`, "unknown setting provider.baseUrl (did you mean baseURL? setting names are case-sensitive)"},
		{`{"Compaction": {}}`, "unknown setting Compaction (did you mean compaction?"},
		{"\n{\n  \"limits\": {\n    \"maxContextChars\": 1000,,\n  }\n}", "invalid JSON at line 4, column 29"},
	} {
		path := filepath.Join(dir, "c.json")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want it to say %q", tc.text, err, tc.want)
		}
	}
}
