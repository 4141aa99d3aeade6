// Command alisio-lsp is the alisio daemon (stdio JSON-RPC beside the editor) and its command-line tools:
// session import/export/inspection, context measurement and compaction.
package main

import (
	"errors"
	"os"

	"github.com/alisio-lsp/alisio-lsp/agent/tools"
	"github.com/alisio-lsp/alisio-lsp/internal/osproc"
)

func main() {
	hideErr := osproc.HideSecrets(tools.SecretName)
	root, a := newRootCommand(os.Stdin, os.Stdout, os.Stderr)
	a.startupProblem = hideErr
	a.args = os.Args[1:]
	if err := root.Execute(); err != nil {
		a.fail(err)
		var remote exitCode
		if errors.As(err, &remote) {
			os.Exit(int(remote))
		}
		os.Exit(1)
	}
}
