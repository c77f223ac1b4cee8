package main

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
		Args: oneArg("cshell output needs a shell id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(wait >= 0 && wait <= 60) { // NaN too
				return usageError("--wait %v: give 0 to 60 seconds", wait)
			}
			var re *regexp.Regexp
			if filter != "" {
				var err error
				if re, err = regexp.Compile(filter); err != nil {
					return usageError("--filter %q is not a valid regular expression (RE2): %v", filter, err)
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

func newKillCmd(g *globals) *cobra.Command {
	var sigName string
	var grace float64
	cmd := &cobra.Command{
		Use:   "kill ID|NAME|all",
		Short: "Stop a shell: a signal to its process group, then KILL after a grace period",
		Long: `Send the signal (default TERM) to the shell's whole process group; after
the grace period (default 10 s) kill everything left in the shell. Returns
once the shell is really gone. 'all' stops every running shell of the
session ($CSHELL_SESSION, else default; or --session).`,
		Example: `  cshell kill 3
  cshell kill web --signal INT --grace 2
  cshell kill all --grace 0`,
		Args: oneArg("cshell kill needs a shell id, name or all"),
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := shells.ParseSignal(sigName)
			if err != nil {
				return err
			}
			if !(grace >= 0 && grace <= shells.MaxGrace.Seconds()) { // NaN too
				return usageError("--grace %v: give 0 to %.0f seconds", grace, shells.MaxGrace.Seconds())
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			d := time.Duration(grace * float64(time.Second))
			var results []*shells.KillResult
			if args[0] == "all" {
				results, err = m.KillSession(session(cmd), sig, d)
			} else {
				var r *shells.KillResult
				if r, err = m.Kill(args[0], sig, d); r != nil {
					results = append(results, r)
				}
			}
			failed := 0
			if g.json {
				// One document: an object for a shell, an array for all.
				list := []map[string]any{}
				for _, r := range results {
					o := map[string]any{"id": r.Meta.ID, "status": r.Meta.Status, "status_line": r.Meta.StatusLine,
						"already_finished": r.AlreadyFinished, "exit_code": r.Meta.ExitCode, "signal": r.Meta.Signal}
					if len(r.Meta.Escaped) > 0 {
						o["escaped_pids"] = r.Meta.Escaped
					}
					if r.Err != nil {
						o["error"] = r.Err.Error()
						failed++
					}
					list = append(list, o)
				}
				switch {
				case args[0] == "all":
					_ = g.printJSON(list)
				case len(list) == 1:
					_ = g.printJSON(list[0])
				}
			} else {
				for _, r := range results {
					switch {
					case r.Err != nil:
						failed++
					case r.AlreadyFinished:
						fmt.Fprintf(g.stdout, "shell %s already finished: %s\n", r.Meta.ID, r.Meta.StatusLine)
					default:
						fmt.Fprintln(g.stdout, r.Text())
					}
				}
				if args[0] == "all" && len(results) == 0 && err == nil {
					fmt.Fprintf(g.stdout, "no running shells in session %s\n", session(cmd))
				}
			}
			if args[0] == "all" && failed > 0 {
				// One sentence a shell that could not be stopped; the others were.
				for _, r := range results {
					if r.Err != nil {
						fmt.Fprintf(g.stderr, "cshell: %s\n", r.Err)
					}
				}
				return &exitError{code: exitFailed, silent: true}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&sigName, "signal", "TERM", "TERM, INT, HUP or KILL (SIG prefix and numbers accepted)")
	cmd.Flags().Float64Var(&grace, "grace", 10, "seconds before everything left is killed; 0 sends KILL at once after the signal")
	cmd.Flags().String("session", "", "with all: the session to stop (default $CSHELL_SESSION, else default)")
	return cmd
}

// session is the --session flag's value, else the default session.
func session(cmd *cobra.Command) string {
	if s, _ := cmd.Flags().GetString("session"); s != "" {
		return s
	}
	return shells.DefaultSession()
}

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
		Example: "  cshell logs 3 -n 50\n  cshell logs web -f\n  cshell logs 3 > build.log",
		Args:    oneArg("cshell logs needs a shell id or name"),
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
				show = func(s string) string { return shells.Visible(s, color) }
			}
			return m.Logs(cmd.Context(), args[0], lines, follow, show, g.stdout)
		},
	}
	cmd.Flags().IntVarP(&lines, "lines", "n", 0, "the last LINES lines (default: all)")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow until the shell ends")
	cmd.Flags().BoolVar(&color, "color", false, "to a terminal: keep colour codes")
	return cmd
}

func newWaitCmd(g *globals) *cobra.Command {
	var timeout string
	cmd := &cobra.Command{
		Use:   "wait ID|NAME [--timeout DUR]",
		Short: "Wait for a shell to end and exit with its code",
		Long: `Block until the shell ends and exit with its exit code (128+N for signal
N); exit 124 when the timeout passes first.`,
		Example: "  cshell wait 3\n  cshell wait build --timeout 10m",
		Args:    oneArg("cshell wait needs a shell id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseDuration(timeout)
			if err != nil {
				return usageError("--timeout %q: %v", timeout, err)
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			meta, err := m.Wait(cmd.Context(), args[0], d)
			if errors.Is(err, shells.ErrWaitTimeout) {
				return &exitError{code: 124, err: err}
			}
			if err != nil {
				return err
			}
			if g.json {
				_ = g.printJSON(meta)
			}
			if meta.ExitCode == nil { // lost: say so, wait's code alone cannot
				return &exitError{code: meta.ExitStatus(), err: fmt.Errorf("shell %s is %s; its exit code is unknown", meta.ID, meta.StatusLine)}
			}
			return &exitError{code: meta.ExitStatus(), silent: true}
		},
	}
	cmd.Flags().StringVar(&timeout, "timeout", "", "give up after this long (exit 124)")
	return cmd
}

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

func newEventsCmd(g *globals) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:     "events [-f]",
		Short:   "Print completion notices of shells that ended by themselves",
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
				name := n.ID
				if n.Name != "" {
					name += " (" + n.Name + ")"
				}
				fmt.Fprintf(g.stdout, "shell %s %s: %s\n", shells.Sanitize(name), n.StatusLine, shells.Sanitize(n.Command))
				for _, l := range n.LastLines {
					fmt.Fprintf(g.stdout, "  | %s\n", shells.Visible(l, false))
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "wait for new notices")
	return cmd
}

// oneArg requires the single shell argument; missing says sentence.
func oneArg(missing string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usageError("%s; see %s --help", missing, cmd.CommandPath())
		case len(args) > 1:
			return usageError("%s takes one shell, not %d (%s); see %s --help",
				cmd.CommandPath(), len(args), strings.Join(args, " "), cmd.CommandPath())
		}
		return nil
	}
}

func shortCommand(c string) string {
	c = shells.Sanitize(strings.Join(strings.Fields(c), " "))
	if len(c) > 50 {
		return c[:47] + "..."
	}
	return c
}

func newWaitReadyCmd(g *globals) *cobra.Command {
	var ports []int
	var logRe, timeout string
	cmd := &cobra.Command{
		Use:   "wait-ready ID|NAME [--port N]... [--log REGEX] [--timeout DUR]",
		Short: "Wait until a shell's ports accept connections and/or a line of output matches",
		Long: `Wait until the shell's exposed ports (or the ones named with --port) accept
a connection inside it, and/or a line of its output matches --log. Exit 0
when ready; exit 1 with a sentence when the timeout (default 60s) passes or
the shell ends first.`,
		Example: "  cshell wait-ready web\n  cshell wait-ready 3 --port 8080 --log 'listening on' --timeout 2m",
		Args:    oneArg("cshell wait-ready needs a shell id or name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := parseDuration(timeout)
			if err != nil || d == 0 {
				return usageError("--timeout %q: write a duration such as 60s or plain seconds", timeout)
			}
			o := shells.ReadyOptions{Timeout: d, Ports: ports}
			for _, p := range ports {
				if p < 1 || p > 65535 {
					return usageError("--port %d: the port must be from 1 to 65535", p)
				}
			}
			if logRe != "" {
				if o.Log, err = regexp.Compile(logRe); err != nil {
					return usageError("--log %q is not a valid regular expression (RE2): %v", logRe, err)
				}
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			if len(ports) == 0 && o.Log == nil {
				meta, err := m.Find(args[0])
				if err != nil {
					return err
				}
				for _, e := range meta.Exposed {
					o.Ports = append(o.Ports, e.Port)
				}
				if len(o.Ports) == 0 {
					return usageError("shell %s exposes no port; name one with --port or wait for output with --log", meta.ID)
				}
			}
			meta, err := m.WaitReady(cmd.Context(), args[0], o)
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			if g.json {
				return g.printJSON(map[string]any{"id": meta.ID, "ready": true})
			}
			fmt.Fprintf(g.stdout, "shell %s is ready\n", meta.ID)
			return nil
		},
	}
	cmd.Flags().IntSliceVar(&ports, "port", nil, "a port that must accept connections inside the shell (repeatable)")
	cmd.Flags().StringVar(&logRe, "log", "", "a regex a line of output must match")
	cmd.Flags().StringVar(&timeout, "timeout", "60s", "give up after this long (exit 1)")
	return cmd
}
