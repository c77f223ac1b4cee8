package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/shells"
)

func newEventsCmd(g *globals) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "events [-f]",
		Short: "Print completion notices of shells that ended by themselves, and refused hosts",
		Long: `Print the completion notices of shells that ended by themselves and the
hosts shells were refused ("refused" events, each host and port of a shell
at most once a minute), oldest first; -f waits for new ones. A program
that watches them (cshell events -f --json) can ask its user and grant a
host with cshell allow.`,
		Example: "  cshell events\n  cshell events -f --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := g.manager()
			if err != nil {
				return err
			}
			return m.Events(cmd.Context(), follow, func(n shells.Notice, raw []byte) {
				if g.json {
					fmt.Fprintf(g.stdout, "%s\n", raw)
					return
				}
				if n.Refused() {
					who := "a foreground shell"
					if n.ID != "" {
						who = "shell " + n.ID
					}
					fmt.Fprintf(g.stdout, "%s of session %s was refused %s:%d (%s); cshell allow --session %s %s:%d lets it\n",
						who, escape.Line(n.Session), n.Host, n.Port, escape.Line(n.Command), escape.Line(n.Session), n.Host, n.Port)
					return
				}
				if n.Told() {
					who := "a foreground shell"
					if n.ID != "" {
						who = "shell " + n.ID
					}
					fmt.Fprintf(g.stdout, "%s of session %s (%s): %s\n", who, escape.Line(n.Session), escape.Line(n.Command), escape.Line(n.Detail))
					return
				}
				name := n.ID
				if n.Name != "" {
					name += " (" + n.Name + ")"
				}
				fmt.Fprintf(g.stdout, "shell %s %s: %s\n", escape.Line(name), n.StatusLine, escape.Line(n.Command))
				for _, l := range n.LastLines {
					fmt.Fprintf(g.stdout, "  | %s\n", escape.Output(l, false))
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "wait for new notices")
	return cmd
}
