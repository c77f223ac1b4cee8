package main

import (
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/shells"
)

func newOutputCmd(g *globals) *cobra.Command {
	var wait float64
	var filter string
	var fromByte int64
	var color bool
	cmd := &cobra.Command{
		Use:   "output ID|NAME",
		Short: "Print a shell's status and the output since the last read",
		Long: `Print the shell's status line and the output written since the last
'cshell output' of it; the first read returns the last 200 lines. One read
returns at most 64 KiB, the newest part, with a line telling how many bytes
were skipped and how to read them. New network violations follow.

The output is shown as text that cannot drive a terminal: control
characters other than newline and tab, and bytes that are not UTF-8, are
written as \xNN (--color keeps colour codes), and a line of the shell's
that starts with "[cshell" has its bracket escaped, so that only cshell's
own lines do.`,
		Example: `  cshell output 3
  cshell output web --wait 30 --filter 'error|ready'
  cshell output 3 --from-byte 0 --json`,
		Args:              oneArg("cshell output needs a shell id or name"),
		ValidArgsFunction: completeShells(g, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(wait >= 0 && wait <= 60) { // NaN too
				return usageError("--wait %v: give 0 to 60 seconds", wait)
			}
			var re *regexp.Regexp
			if filter != "" {
				var err error
				if re, err = plan.CompileRegexp("--filter", filter); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("from-byte") && fromByte < 0 {
				return usageError("--from-byte %d: give a byte offset of 0 or more", fromByte)
			}
			if !cmd.Flags().Changed("from-byte") {
				fromByte = -1
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			r, err := m.Output(cmd.Context(), args[0], shells.OutputOptions{
				Wait: time.Duration(wait * float64(time.Second)), Filter: re, FromByte: fromByte, Color: color})
			if err != nil {
				return err
			}
			if g.json {
				return g.printJSON(r)
			}
			fmt.Fprint(g.stdout, r.Text())
			return nil
		},
	}
	cmd.Flags().Float64Var(&wait, "wait", 0, "block until new output arrives or the shell ends, at most 60 s")
	cmd.Flags().StringVar(&filter, "filter", "", "keep matching lines only (RE2 syntax)")
	cmd.Flags().Int64Var(&fromByte, "from-byte", 0, "read from byte N of the log instead of the last read position")
	cmd.Flags().BoolVar(&color, "color", false, "keep colour codes in the output (for a terminal)")
	return cmd
}
