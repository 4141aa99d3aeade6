package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/alisio-lsp/alisio-lsp/agent/providertest"
)

// TestCLI_KeysAreNotInTheProcessEnvironment: a command of the agent that reads the environment alisio-lsp was
// started with (/proc/PID/environ, readable by the user's processes and by root) finds no API key there,
// while the key still reaches the provider. The key used to be read there as it was given.
func TestCLI_KeysAreNotInTheProcessEnvironment(t *testing.T) {
	data, ws := t.TempDir(), t.TempDir()
	const secret = "sk-alisio-environ-4d2a9c"
	// The command reads the environ of the wrapper's parent: the alisio-lsp that runs the turn.
	read := `tr '\0' '\n' < /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/environ | grep -c '^PATH=' ; tr '\0' '\n' < /proc/$(cut -d' ' -f4 /proc/$PPID/stat)/environ | grep ^ALISIO_TEST_API_KEY= || echo no-key-there`
	var mu sync.Mutex
	var auth []string
	script := providertest.New(providertest.Script{Replies: []providertest.Reply{
		{ToolCalls: []providertest.ToolCall{{ID: "call_env", Name: "run_command", Arguments: `{"command":` + strconv.Quote(read) + `}`}}},
		{Text: "done"},
	}})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		script.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	cfg := filepath.Join(t.TempDir(), "config.json")
	must(t, os.WriteFile(cfg, []byte(`{"provider":{"kind":"openai","baseURL":"`+hs.URL+`/v1","model":"m","apiKeyEnv":"ALISIO_TEST_API_KEY"}}`), 0o600))
	t.Setenv("ALISIO_TEST_API_KEY", secret)
	out, errOut, code := cli(t, data, "", "--config", cfg, "--json", "prompt", "--workspace", ws, "read the environment")
	if code != 0 {
		t.Fatalf("prompt: %s %s", out, errOut)
	}
	var session struct{ ID string }
	must(t, json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &session))
	result := mustCLI(t, data, "sessions", "export", session.ID)
	if !strings.Contains(result, `no-key-there`) || strings.Contains(result, secret) || !strings.Contains(result, `exit code 0\n1\n`) {
		t.Fatalf("what the command read of alisio-lsp's environment: %s", result)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer "+secret {
		t.Fatalf("the provider got Authorization %q", auth)
	}
}
