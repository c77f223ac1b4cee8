package main

import (
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
