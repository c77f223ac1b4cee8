package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

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
