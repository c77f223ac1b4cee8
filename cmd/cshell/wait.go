package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/shells"
)

func newWaitCmd(g *globals) *cobra.Command {
	var timeout string
	cmd := &cobra.Command{
		Use:   "wait ID|NAME [--timeout DUR]",
		Short: "Wait for a shell to end and exit with its code",
		Long: `Block until the shell ends and exit with its exit code (128+N for signal
N); exit 124 when the timeout passes first.`,
		Example:           "  cshell wait 3\n  cshell wait build --timeout 10m",
		Args:              oneArg("cshell wait needs a shell id or name"),
		ValidArgsFunction: completeShells(g, false),
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
		Example:           "  cshell wait-ready web\n  cshell wait-ready 3 --port 8080 --log 'listening on' --timeout 2m",
		Args:              oneArg("cshell wait-ready needs a shell id or name"),
		ValidArgsFunction: completeShells(g, false),
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
				if o.Log, err = plan.CompileRegexp("--log", logRe); err != nil {
					return err
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
				return g.printJSON(readyAnswer{ID: meta.ID, Ready: true})
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
