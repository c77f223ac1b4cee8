package main

import (
	"github.com/spf13/cobra"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/shells"
)

func newLogsCmd(g *globals) *cobra.Command {
	var lines int
	var follow, color bool
	cmd := &cobra.Command{
		Use:   "logs ID|NAME [-n LINES] [-f]",
		Short: "Print a shell's log (moves no read position)",
		Long: `Print the shell's log, or its last LINES lines; -f follows it until the
shell ends, line by line, and says in a line of its own how many bytes the
log cap (shells.maxLogBytes) dropped before they could be read.

To a terminal the log is shown as text that cannot drive it (control
characters as \xNN; --color keeps colour codes); to a file or a pipe it is
written as the shell wrote it.`,
		Example:           "  cshell logs 3 -n 50\n  cshell logs web -f\n  cshell logs 3 > build.log",
		Args:              oneArg("cshell logs needs a shell id or name"),
		ValidArgsFunction: completeShells(g, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := g.manager()
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("lines") {
				lines = -1
			} else if lines < 0 {
				return usageError("-n %d: give 0 or more lines", lines)
			}
			var show func(string) string
			if shells.IsTerminal(g.stdout) {
				show = func(s string) string { return escape.Output(s, color) }
			}
			return m.Logs(cmd.Context(), args[0], lines, follow, show, g.stdout)
		},
	}
	cmd.Flags().IntVarP(&lines, "lines", "n", 0, "the last LINES lines (default: all)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow until the shell ends")
	cmd.Flags().BoolVar(&color, "color", false, "to a terminal: keep colour codes")
	return cmd
}
