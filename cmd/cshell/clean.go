package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newCleanCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "clean",
		Short:   "Remove the folders of finished shells",
		Example: "  cshell clean",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := g.manager()
			if err != nil {
				return err
			}
			n, err := m.Clean()
			if g.json {
				_ = g.printJSON(map[string]int{"removed": n})
			} else {
				fmt.Fprintf(g.stdout, "removed %d finished shell(s)\n", n)
			}
			return err
		},
	}
}
