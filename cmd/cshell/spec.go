package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cshell/cshell/shells"
)

func newSpecCmd(g *globals) *cobra.Command {
	var o runOptions
	var bundle string
	cmd := &cobra.Command{
		Use:   "spec --bundle DIR [policy flags] [--] COMMAND...",
		Short: "Write an OCI bundle of a shell for runc, crun or a container engine",
		Long: `Write an OCI runtime bundle for COMMAND and the policy flags of cshell run
into DIR (missing or empty): config.json, rootfs/ (mount points and the
host's top-level links; the host's directories are bound read-only) and
hidden/ (the stand-ins bound over hidden paths). runc run and crun run
start it unchanged, as root or not: the same read-only host, writable
working directory and --rw paths, hidden paths, private /tmp, every
namespace with loopback only, no capability, and cshell's syscall filter.

Exposed ports, allowed hosts, the proxy, the mount checks and the memory
watchdog need cshell's supervisor, which a bundle has not: --expose,
--allow-host and --add-host are refused, and the bundle's shell reaches
loopback only. The bundle may not lie where the shell can write.`,
		Example: `  cshell spec --bundle /tmp/b -w ~/src/app -- make test
  sudo runc run --bundle /tmp/b app-test
  cshell spec --bundle ~/bundles/lint --hide ~/.netrc -- npm run lint && crun run --bundle ~/bundles/lint lint`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("cshell spec needs a command; write cshell spec --bundle DIR -- COMMAND")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if bundle == "" {
				return usageError("cshell spec needs --bundle DIR: where to write config.json and rootfs")
			}
			ro, err := o.runOptions(cmd, g)
			if err != nil {
				return err
			}
			ro.Command = args
			if err := shells.WriteBundle(ro, bundle); err != nil {
				return err
			}
			abs, _ := filepath.Abs(bundle)
			if g.json {
				return json.NewEncoder(g.stdout).Encode(map[string]string{"bundle": abs, "config": filepath.Join(abs, "config.json")})
			}
			fmt.Fprintf(g.stdout, "wrote an OCI bundle to %s (config.json, rootfs/, hidden/)\n", abs)
			fmt.Fprintf(g.stdout, "run it with: runc run --bundle %s NAME, or crun run --bundle %s NAME\n", abs, abs)
			fmt.Fprintln(g.stdout, "it has no exposed ports, proxy or allowed hosts: those need cshell's supervisor (cshell run)")
			return nil
		},
	}
	cmd.Flags().SetInterspersed(false)
	addPolicyFlags(cmd, &o)
	cmd.Flags().StringVar(&bundle, "bundle", "", "directory to write the bundle into (missing or empty)")
	return cmd
}
