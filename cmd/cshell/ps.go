package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/shells"
)

func newPsCmd(g *globals) *cobra.Command {
	var all, quiet bool
	var sessionName string
	cmd := &cobra.Command{
		Use:   "ps [--all] [--session NAME] [-q]",
		Short: "List running shells (--all: finished ones too)",
		Long: `List the running shells of every session (--all: finished ones too;
--session: one session's only). A SESSION column appears when the shells
listed belong to more than one session. -q prints their ids only, one a
line, for scripts (cshell kill $(cshell ps -q --session ci)).`,
		Example: "  cshell ps\n  cshell ps --all --json\n  cshell ps -q --session ci",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sessionName != "" {
				if err := shells.CheckSession(sessionName); err != nil {
					return err
				}
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			list := []*shells.Meta{}
			sessions := map[string]bool{}
			for _, s := range m.List() {
				if (all || !s.Finished()) && (sessionName == "" || s.Session == sessionName) {
					list = append(list, s)
					sessions[s.Session] = true
				}
			}
			if g.json {
				return g.printJSON(list)
			}
			if quiet {
				for _, s := range list {
					fmt.Fprintln(g.stdout, s.ID)
				}
				return nil
			}
			withSession := len(sessions) > 1
			tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
			head := "ID\tNAME\tSTATUS\tRUNTIME\tISOLATION\tCOMMAND\tLOG\tEXPOSED"
			if withSession {
				head = "ID\tSESSION\tNAME\tSTATUS\tRUNTIME\tISOLATION\tCOMMAND\tLOG\tEXPOSED"
			}
			fmt.Fprintln(tw, head)
			for _, s := range list {
				var exposed []string
				for _, e := range s.Exposed {
					exposed = append(exposed, fmt.Sprintf("%s->%d", e.Listen, e.Port))
				}
				logCol := s.Log
				if s.LogDropped > 0 {
					logCol += fmt.Sprintf(" (trimmed: %d bytes dropped)", s.LogDropped)
				}
				id := s.ID
				if withSession {
					id += "\t" + escape.Line(s.Session)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fs\t%s\t%s\t%s\t%s\n", id, s.Name, s.StatusLine, s.RuntimeSeconds,
					s.Isolation, shortCommand(s.Command), logCol, strings.Join(exposed, ","))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "finished shells too")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print the shells' ids only, one a line")
	cmd.Flags().StringVar(&sessionName, "session", "", "list only this session's shells")
	return cmd
}

func shortCommand(c string) string {
	c = escape.Line(strings.Join(strings.Fields(c), " "))
	if len(c) > 50 {
		return c[:47] + "..."
	}
	return c
}
