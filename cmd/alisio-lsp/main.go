// Command alisio-lsp is the alisio daemon (stdio JSON-RPC beside the editor) and its command-line tools:
// session import/export/inspection, context measurement and compaction.
package main

import (
	"os"
)

func main() {
	root, a := newRootCommand(os.Stdin, os.Stdout, os.Stderr)
	if err := root.Execute(); err != nil {
		a.fail(err)
		os.Exit(1)
	}
}
