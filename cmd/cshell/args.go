package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

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

// completeShells completes a shell argument with the ids and names of the
// shells (running ones only, for running), described by their command;
// all is offered too where running is set (kill all).
func completeShells(g *globals, running bool) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		m, err := g.manager()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer m.Close()
		var out []cobra.Completion
		for _, s := range m.List() {
			if running && s.Finished() || slices.Contains(args, s.ID) || s.Name != "" && slices.Contains(args, s.Name) {
				continue
			}
			about := shortCommand(s.Command) + " (" + s.StatusLine + ")"
			out = append(out, cobra.CompletionWithDesc(s.ID, about))
			if s.Name != "" {
				out = append(out, cobra.CompletionWithDesc(s.Name, about))
			}
		}
		if running && len(args) == 0 {
			out = append(out, cobra.CompletionWithDesc("all", "every running shell of the session"))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}
