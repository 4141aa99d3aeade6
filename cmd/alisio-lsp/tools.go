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
			for _, src := range d.Sources {
				a.printf("%-9s %d tools, %d chars of catalog: %s\n", src.Source, src.Count, src.Chars, strings.Join(src.Tools, ", "))
				if src.Problem != "" {
					a.printf("          problem: %s\n", src.Problem)
				}
			}
			a.printf("%s\n", d.Confinement)
			return nil
		},
	}
	cmd.Flags().StringVar(&workspace, "workspace", "", "workspace root (default: current directory)")
	return cmd
}
