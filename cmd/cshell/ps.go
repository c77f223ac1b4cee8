package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

func newPsCmd(g *globals) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:     "ps [--all]",
		Short:   "List running shells (--all: finished ones too)",
		Example: "  cshell ps\n  cshell ps --all --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := g.manager()
			if err != nil {
				return err
			}
			list := []*shells.Meta{}
			for _, s := range m.List() {
				if all || !s.Finished() {
					list = append(list, s)
				}
			}
			if g.json {
				return g.printJSON(list)
			}
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tRUNTIME\tISOLATION\tCOMMAND\tLOG\tEXPOSED")
			for _, s := range list {
				var exposed []string
				for _, e := range s.Exposed {
					exposed = append(exposed, fmt.Sprintf("%s->%d", e.Listen, e.Port))
				}
				logCol := s.Log
				if s.LogDropped > 0 {
					logCol += fmt.Sprintf(" (trimmed: %d bytes dropped)", s.LogDropped)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fs\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.StatusLine, s.RuntimeSeconds,
					s.Isolation, shortCommand(s.Command), logCol, strings.Join(exposed, ","))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "finished shells too")
	return cmd
}

func shortCommand(c string) string {
	c = shells.Sanitize(strings.Join(strings.Fields(c), " "))
	if len(c) > 50 {
		return c[:47] + "..."
	}
	return c
}
