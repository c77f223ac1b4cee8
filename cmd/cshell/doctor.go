package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/shells"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var profile bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Show what this machine allows and which isolation auto picks",
		Long: `Probe this machine: user namespaces (by creating them in a child, writing
its uid_map and mounting a fresh /proc there), subordinate ids, cgroup
version and delegation, seccomp; then say which isolation --isolation auto
picks, and why. When something stops a shell's container (a sysctl,
AppArmor, a container engine's seccomp profile or masked /proc), doctor
names the cause and the fix, and cshell run says the same.

--apparmor-profile prints an AppArmor profile for this binary that lets it
make user namespaces on hosts that restrict them (Ubuntu 23.10 and later),
with the commands that install it.`,
		Example: `  cshell doctor
  cshell doctor --json
  cshell doctor --apparmor-profile | sudo tee /etc/apparmor.d/cshell >/dev/null
  sudo apparmor_parser -r /etc/apparmor.d/cshell`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if profile {
				return printAppArmorProfile(g)
			}
			home, _ := homes()
			r := shells.Doctor(home)
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
			for _, x := range r.Restrictions {
				fmt.Fprintf(g.stdout, "FAIL %s\n     fix: %s\n", x.Cause, x.Fix)
			}
			fmt.Fprintf(g.stdout, "isolation auto: %s (%s)\n", r.Isolation, r.Reason)
			return nil
		},
	}
	cmd.Flags().BoolVar(&profile, "apparmor-profile", false, "print an AppArmor profile that lets this binary make user namespaces, and how to install it")
	return cmd
}

func printAppArmorProfile(g *globals) error {
	if runtime.GOOS != "linux" {
		return usageError("--apparmor-profile: AppArmor is Linux's; %s needs no profile", runtime.GOOS)
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return fmt.Errorf("find this binary's path for the profile: %w", err)
	}
	p, err := container.AppArmorProfile(self)
	if err != nil {
		return err
	}
	fmt.Fprint(g.stdout, p)
	return nil
}
