package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

func newDoctorCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Show what this machine allows and which isolation auto picks",
		Long: `Probe this machine: user namespaces (by creating them), subordinate ids,
cgroup version and delegation, seccomp; then say which isolation
--isolation auto picks, and why.`,
		Example: `  cshell doctor
  cshell doctor --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r := shells.Doctor()
			if g.json {
				enc := json.NewEncoder(g.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			fmt.Fprintf(g.stdout, "system: %s\n", r.OS)
			for _, c := range r.Checks {
				mark := "ok  "
				if !c.OK {
					mark = "FAIL"
				}
				fmt.Fprintf(g.stdout, "%s %s: %s\n", mark, c.Name, c.Detail)
			}
			fmt.Fprintf(g.stdout, "isolation auto: %s (%s)\n", r.Isolation, r.Reason)
			return nil
		},
	}
}
