package main

import (
	"github.com/spf13/cobra"

	"github.com/alisio-lsp/alisio-lsp/agent"
	"github.com/alisio-lsp/alisio-lsp/storage"
)

func (a *app) memoriesCommand() *cobra.Command {
	var workspace string
	resolve := func() string { return a.workspaceDir(workspace) }
	cmd := &cobra.Command{
		Use:   "memories",
		Short: "list or delete what the memory plugin saved for a workspace (new sessions start with these)",
	}
	cmd.PersistentFlags().StringVar(&workspace, "workspace", "", "workspace root (default: current directory)")
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "list the memories of the workspace, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(contextOf(cmd), func(st *storage.Store) error {
				ms, err := st.Memories(resolve())
				if err != nil {
					return err
				}
				for _, m := range ms {
					if a.jsonOut {
						if err := a.emit("memory", map[string]any{"id": m.ID, "text": m.Text, "session": m.Session, "createdAt": m.CreatedAt}); err != nil {
							return err
						}
						continue
					}
					a.printf("%s  %s  %s\n", m.ID, m.CreatedAt.Local().Format("2006-01-02 15:04"), m.Text)
				}
				if a.jsonOut {
					return nil
				}
				if len(ms) == 0 {
					a.printf("no memories for %s\n", resolve())
				} else if sent := agent.MemoriesSent(ms, a.cfg.Memory.MaxChars); sent < len(ms) {
					a.printf("new sessions and compactions send the newest %d of these %d (memory.maxChars %d); the older ones stay stored until deleted\n",
						sent, len(ms), a.cfg.Memory.MaxChars)
				}
				return nil
			})
		},
	}, &cobra.Command{
		Use:   "delete ID",
		Short: "delete one memory of the workspace",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(contextOf(cmd), func(st *storage.Store) error {
				if err := st.DeleteMemory(resolve(), args[0]); err != nil {
					return err
				}
				if a.jsonOut {
					return a.emit("deleted", map[string]any{"memory": args[0]})
				}
				a.printf("deleted %s\n", args[0])
				return nil
			})
		},
	})
	return cmd
}
