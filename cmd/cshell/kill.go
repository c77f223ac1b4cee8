package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

func newKillCmd(g *globals) *cobra.Command {
	var sigName string
	var grace float64
	cmd := &cobra.Command{
		Use:   "kill ID|NAME... | all",
		Short: "Stop shells: a signal to each one's process group, then KILL after a grace period",
		Long: `Send the signal (default TERM) to each shell's whole process group; after
the grace period (default 10 s) kill everything left in it. Returns once
the shells are really gone. 'all' stops every running shell of the
session ($CSHELL_SESSION, else default; or --session).`,
		Example: `  cshell kill 3
  cshell kill web api --signal INT --grace 2
  cshell kill all --grace 0`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageError("cshell kill needs a shell id, name or all; see cshell kill --help")
			case len(args) > 1 && slices.Contains(args, "all"):
				return usageError("cshell kill all stops every shell of the session: give it alone, or ids and names without it")
			}
			return nil
		},
		ValidArgsFunction: completeShells(g, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := shells.ParseSignal(sigName)
			if err != nil {
				return err
			}
			if !shells.GracefulStop && cmd.Flags().Changed("signal") && sig != syscall.SIGKILL {
				return usageError("--signal %s: %s", sigName, shells.NoGracefulStop)
			}
			if !(grace >= 0 && grace <= shells.MaxGrace.Seconds()) { // NaN too
				return usageError("--grace %v: give 0 to %.0f seconds", grace, shells.MaxGrace.Seconds())
			}
			m, err := g.manager()
			if err != nil {
				return err
			}
			d := time.Duration(grace * float64(time.Second))
			all := args[0] == "all"
			var results []*shells.KillResult
			var missing []error // ids and names that name no shell
			if all {
				results, err = m.KillSession(cmd.Context(), session(cmd), sig, d)
			} else {
				results, missing = killEach(cmd.Context(), m, args, sig, d)
				err = nil
			}
			failed := len(missing)
			if g.json {
				// One document: an object for one shell, an array for all
				// or several.
				list := []killAnswer{}
				for _, r := range results {
					o := killAnswer{ID: r.Meta.ID, Status: r.Meta.Status, StatusLine: r.Meta.StatusLine,
						AlreadyFinished: r.AlreadyFinished, ExitCode: r.Meta.ExitCode, Signal: r.Meta.Signal, EscapedPids: r.Meta.Escaped}
					if r.Err != nil {
						o.Error = r.Err.Error()
						failed++
					}
					list = append(list, o)
				}
				switch {
				case all || len(args) > 1:
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
				if all && len(results) == 0 && err == nil {
					fmt.Fprintf(g.stdout, "no running shells in session %s\n", session(cmd))
				}
			}
			if all && err == nil {
				// Shells of other sessions run on: say so, so that nobody
				// takes "all" for every shell of this user.
				if n := runningElsewhere(m, session(cmd)); n > 0 {
					fmt.Fprintf(g.stderr, "cshell: %d shell(s) of other sessions still run; cshell ps lists them, cshell kill all --session NAME stops a session's\n", n)
				}
			}
			if len(args) == 1 && !all && len(missing) == 1 {
				return missing[0]
			}
			if failed > 0 {
				// One sentence a shell that could not be stopped; the others were.
				for _, e := range missing {
					fmt.Fprintf(g.stderr, "cshell: %s; cshell ps --all lists the shells\n", e)
				}
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
	_ = cmd.RegisterFlagCompletionFunc("signal", cobra.FixedCompletions([]string{"TERM", "INT", "HUP", "KILL"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// killEach stops the shells refs name, all at once; a ref that names no
// shell comes back as an error of its own, a shell that cannot be
// stopped as its result's Err.
func killEach(ctx context.Context, m *shells.Manager, refs []string, sig syscall.Signal, grace time.Duration) ([]*shells.KillResult, []error) {
	results := make([]*shells.KillResult, len(refs))
	errs := make([]error, len(refs))
	var wg sync.WaitGroup
	for i, ref := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := m.Kill(ctx, ref, sig, grace)
			switch {
			case r != nil:
				results[i] = r
			case errors.Is(err, shells.ErrNotFound):
				errs[i] = err
			case err != nil:
				results[i] = &shells.KillResult{Meta: &shells.Meta{ID: ref}, Err: err}
			}
		}()
	}
	wg.Wait()
	var out []*shells.KillResult
	var missing []error
	for i := range refs {
		if results[i] != nil {
			out = append(out, results[i])
		}
		if errs[i] != nil {
			missing = append(missing, errs[i])
		}
	}
	return out, missing
}

// runningElsewhere counts the running shells of other sessions than s.
func runningElsewhere(m *shells.Manager, s string) int {
	n := 0
	for _, meta := range m.List() {
		if meta.Session != s && !meta.Finished() {
			n++
		}
	}
	return n
}

// session is the --session flag's value, else the default session.
func session(cmd *cobra.Command) string {
	if s, _ := cmd.Flags().GetString("session"); s != "" {
		return s
	}
	return shells.DefaultSession()
}
