package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/relevantfiles"
)

func (a *app) toolsCommand() *cobra.Command {
	var workspace string
	cmd := &cobra.Command{
		Use:   "tools [--workspace DIR]",
		Short: "list the agent's tools with the size of their catalog, and what confines run_command here",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			workspace := a.workspaceDir(workspace)
			// The catalog as the agent builds it: the built-ins and the configured MCP servers (started here).
			ag, err := agent.NewContextOnly(nil, nil, a.cfg, workspace, relevantfiles.NewTracker())
			if err != nil {
				return err
			}
			defer ag.Close()
			ag.SyncMCP(contextOf(cmd), a.cfg)
			d := ag.Tools.Describe()
			if a.jsonOut {
				return a.emit("tools", map[string]any{"sources": d.Sources, "catalogChars": d.CatalogChars, "confinement": d.Confinement})
			}
			what := map[string]string{}
			for _, spec := range ag.Tools.Specs() {
				what[spec.Name] = firstSentence(spec.Description)
			}
			for _, src := range d.Sources {
				a.printf("%s: %d tools, %d chars of catalog\n", src.Source, src.Count, src.Chars)
				if src.Problem != "" {
					a.printf("  problem: %s\n", src.Problem)
				}
				for _, name := range src.Tools {
					a.printf("  %-12s %s\n", name, what[name])
				}
			}
			a.printf("%s\n", d.Confinement)
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root (default: current directory)")
	return cmd
}

// firstSentence is a tool description's first sentence (its first line at most): what the tool does.
func firstSentence(description string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(description), "\n")
	if i := strings.Index(line, ". "); i >= 0 {
		return line[:i+1]
	}
	return line
}
