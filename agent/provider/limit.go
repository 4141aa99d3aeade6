package provider

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/alisio-lsp/alisio-lsp/internal/limitio"
)

// replyCap is how many bytes of a provider's answer are read for a reply of at most tokens tokens. Streaming
// wraps every token in an event of a few hundred bytes, so 1 KB a token plus 8 MB leaves a wide margin for an
// honest provider, while one that ignores the budget is stopped long before it costs memory.
func replyCap(tokens int) int64 { return int64(max(tokens, 1))*1024 + 8<<20 }

// ReplyTooLargeError reports a provider that sent more than the reply budget allows; nothing of that answer
// is kept.
type ReplyTooLargeError struct {
	// Setting is the budget's setting, Tokens its value and Bytes how much was read before reading stopped.
	Setting string
	Tokens  int
	Bytes   int64
}

// Error says what the provider did and what was kept.
func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("the provider ignored the reply budget (%s = %d tokens) and kept sending: alisio stopped reading after %d MB and kept nothing of that answer; "+
		"check that provider.baseURL and provider.model name a server that honours max_tokens", e.Setting, e.Tokens, e.Bytes>>20)
}

// limitReply is a middleware of both SDKs that stops reading a response after replyCap(tokens) bytes.
func limitReply(tokens int, setting string) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		resp, err := next(req)
		if err == nil && resp.Body != nil {
			limit := replyCap(tokens)
			resp.Body = limitio.ReadCloser(resp.Body, limit, func() error {
				return &ReplyTooLargeError{Setting: setting, Tokens: tokens, Bytes: limit}
			})
		}
		return resp, err
	}
}

// unreachable turns a failure to connect to the provider into one line naming the URL and the setting to fix.
func unreachable(err error) (error, bool) {
	var urlErr *url.Error
	var opErr *net.OpError
	if !errors.As(err, &urlErr) || !errors.As(err, &opErr) || opErr.Op != "dial" {
		return nil, false
	}
	cause := opErr.Err.Error()
	var sys *os.SyscallError
	if errors.As(opErr.Err, &sys) {
		cause = sys.Err.Error()
	}
	return fmt.Errorf("could not reach the provider at %s (%s): check provider.baseURL and that the server is running", urlErr.URL, cause), true
}

// tooLarge returns the ReplyTooLargeError inside err, if any, so that it reaches the user unwrapped.
func tooLarge(err error) (error, bool) {
	var e *ReplyTooLargeError
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}
