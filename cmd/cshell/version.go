package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=..."
// (hack/release.sh does); otherwise it comes from the build information:
// the module's version when built with go install module@version, else
// the commit the binary was built from.
var version = ""

// buildInfo is what cshell version prints.
type buildInfo struct {
	Version      string `json:"version"`
	Commit       string `json:"commit,omitempty"`
	CommitTime   string `json:"commit_time,omitempty"`
	Modified     bool   `json:"modified"` // built from a work tree with uncommitted changes
	Go           string `json:"go"`
	Platform     string `json:"platform"`
	Libcontainer string `json:"libcontainer"`
}

func readBuildInfo() buildInfo {
	v := buildInfo{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH, Libcontainer: "none"}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if v.Version == "" {
			v.Version = "unknown"
		}
		return v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.CommitTime = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/opencontainers/runc" {
			v.Libcontainer = libcontainerVersion(d)
		}
	}
	switch {
	case v.Version != "":
	case bi.Main.Version != "" && bi.Main.Version != "(devel)":
		v.Version = strings.TrimSuffix(bi.Main.Version, "+dirty")
	case v.Commit != "":
		v.Version = "dev-" + shortCommit(v.Commit)
	default:
		v.Version = "dev"
	}
	return v
}

// libcontainerVersion is runc's release, marked +cshell when the build
// takes it from third_party/runc, the release with cshell's patch
// (go.mod's replace; hack/update-runc.sh).
func libcontainerVersion(d *debug.Module) string {
	if d.Replace != nil && (d.Replace.Version == "" || d.Replace.Version == "(devel)") {
		return d.Version + "+cshell"
	}
	return d.Version
}

// shortCommit is a commit's first 12 hex digits, as git shows it.
func shortCommit(c string) string { return c[:min(12, len(c))] }

// String is the line of cshell version.
func (v buildInfo) String() string {
	s := "cshell " + v.Version
	var extra []string
	if c := shortCommit(v.Commit); c != "" && !strings.Contains(v.Version, c) {
		extra = append(extra, "commit "+c)
	}
	if v.Modified {
		extra = append(extra, "modified")
	}
	extra = append(extra, v.Go, v.Platform, "libcontainer "+v.Libcontainer)
	return s + " (" + strings.Join(extra, ", ") + ")"
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print cshell's version and what it was built with",
		Long: `Print cshell's version, the commit it was built from (and whether the
work tree had uncommitted changes), the Go and libcontainer versions and
the platform. cshell --version prints the same, as "cshell version ...".`,
		Example: "  cshell version\n  cshell version --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := readBuildInfo()
			if g.json {
				return json.NewEncoder(g.stdout).Encode(v)
			}
			fmt.Fprintln(g.stdout, v)
			return nil
		},
	}
}
