package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	openaioption "github.com/openai/openai-go/v3/option"

	"github.com/alisio-lsp/alisio-lsp/compaction"
	"github.com/alisio-lsp/alisio-lsp/config"
)

// Model is a configured provider: the agent's chat, the summarizer, and where its window is read from.
type Model interface {
	Chat
	compaction.Summarizer
	// ContextWindow asks the provider for the model's window in tokens (0: not reported).
	ContextWindow(ctx context.Context) (int, error)
}

// Options tune the SDK clients.
type Options struct {
	// MaxRetries is how many times a failed request (429, 5xx, connection errors) is retried, honouring
	// Retry-After.
	MaxRetries int
}

// DefaultOptions are the options of the daemon and the CLI.
func DefaultOptions() Options { return Options{MaxRetries: 2} }

// Open builds the provider p names.
func Open(p config.Provider, o Options) (Model, error) {
	switch p.Kind {
	case "openai":
		m, err := NewOpenAI(p, openaioption.WithMaxRetries(o.MaxRetries))
		switch {
		case err != nil:
			return nil, err
		case p.Responses:
			return Responses{m}, nil
		}
		return m, nil
	case "anthropic":
		m, err := NewAnthropic(p, anthropicoption.WithMaxRetries(o.MaxRetries))
		if err != nil {
			return nil, err
		}
		return m, nil
	case "":
		return nil, errors.New("no provider is configured: set provider.kind, provider.baseURL and provider.model " +
			"(to try alisio without an API key, run alisio-testprovider and point provider.baseURL at it)")
	}
	return nil, fmt.Errorf("provider.kind %q is not supported; use \"openai\" (any OpenAI-compatible server) or \"anthropic\"", p.Kind)
}

// requestTimeout bounds one provider request.
const requestTimeout = 5 * time.Minute

// apiKey checks the model setting and reads the API key from the variable p.APIKeyEnv names (defaultEnv when
// empty). A missing key is an error when required (a hosted API: no baseURL), else local servers get a
// placeholder, since the SDKs require one. The key is never stored or logged.
func apiKey(p config.Provider, defaultEnv, exampleModel string) (string, error) {
	if p.Model == "" {
		return "", fmt.Errorf("provider.model is not set: name the model to use (for example %q)", exampleModel)
	}
	env := p.APIKeyEnv
	if env == "" {
		env = defaultEnv
	}
	key := ""
	if env != "" {
		key = os.Getenv(env)
	}
	switch {
	case key != "":
		return key, nil
	case p.APIKeyEnv != "":
		return "", fmt.Errorf("provider.apiKeyEnv names %s, but that environment variable is empty; export it before starting alisio-lsp", p.APIKeyEnv)
	case defaultEnv != "" && p.BaseURL == "":
		return "", fmt.Errorf("the API key is missing: export %s (or name another variable in provider.apiKeyEnv)", defaultEnv)
	case p.BaseURL == "":
		return "", errors.New("provider.baseURL is empty, which means OpenAI's own API, and that needs an API key: " +
			"set provider.apiKeyEnv to the environment variable that holds it (for example OPENAI_API_KEY), " +
			"or set provider.baseURL to your server (Ollama: http://localhost:11434/v1)")
	}
	return "none", nil
}
