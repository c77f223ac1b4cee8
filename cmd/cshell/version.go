package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print cshell's version",
		Example: "  cshell version --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := map[string]string{
				"version":      version,
				"go":           runtime.Version(),
				"platform":     runtime.GOOS + "/" + runtime.GOARCH,
				"libcontainer": depVersion("github.com/opencontainers/runc"),
			}
			if g.json {
				return json.NewEncoder(g.stdout).Encode(v)
			}
			fmt.Fprintf(g.stdout, "cshell %s (%s, %s, libcontainer %s)\n", v["version"], v["go"], v["platform"], v["libcontainer"])
			return nil
		},
	}
}

func depVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "none"
}
