package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionLine(t *testing.T) {
	cases := []struct {
		v    buildInfo
		want string
	}{
		{buildInfo{Version: "v1.2.0", Commit: "0123456789abcdef0123", Go: "go1.26.8", Platform: "linux/amd64", Libcontainer: "v1.5.3"},
			"cshell v1.2.0 (commit 0123456789ab, go1.26.8, linux/amd64, libcontainer v1.5.3)"},
		{buildInfo{Version: "dev-0123456789ab", Commit: "0123456789abcdef0123", Modified: true, Go: "go1.26.8", Platform: "linux/arm64", Libcontainer: "v1.5.3"},
			"cshell dev-0123456789ab (modified, go1.26.8, linux/arm64, libcontainer v1.5.3)"},
		{buildInfo{Version: "dev", Go: "go1.26.8", Platform: "darwin/arm64", Libcontainer: "none"},
			"cshell dev (go1.26.8, darwin/arm64, libcontainer none)"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if v := readBuildInfo(); v.Version == "" || v.Go == "" || v.Libcontainer == "" {
		t.Errorf("build information lacks a field: %+v", v)
	}
	runc := &debug.Module{Path: "github.com/opencontainers/runc", Version: "v1.5.3"}
	if got := libcontainerVersion(runc); got != "v1.5.3" {
		t.Errorf("the release itself: %q", got)
	}
	runc.Replace = &debug.Module{Path: "./third_party/runc"}
	if got := libcontainerVersion(runc); got != "v1.5.3+cshell" {
		t.Errorf("the patched copy: %q", got)
	}
}
