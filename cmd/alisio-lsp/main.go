// Command alisio-lsp is the alisio daemon (stdio JSON-RPC beside the editor) and its command-line tools:
// session import/export/inspection, context measurement and compaction.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand(os.Stdin, os.Stdout, os.Stderr).Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "alisio-lsp: %v\n", err)
		os.Exit(1)
	}
}
