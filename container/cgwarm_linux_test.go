package container

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestProcsFile(t *testing.T) {
	has := func(files ...string) func(string) bool {
		return func(p string) bool { return slices.Contains(files, p) }
	}
	hybrid := "9:name=systemd:/\n8:pids:/user.slice\n4:memory:/a/b\n2:cpu,cpuacct:/\n0::/\n"
	for _, c := range []struct {
		name, data string
		exists     func(string) bool
		want       string
	}{
		{"hybrid: the first controller's hierarchy", hybrid,
			has("/sys/fs/cgroup/pids/user.slice/cgroup.procs", "/sys/fs/cgroup/memory/a/b/cgroup.procs"),
			"/sys/fs/cgroup/pids/user.slice/cgroup.procs"},
		{"hybrid: a controller not mounted is passed over", hybrid,
			has("/sys/fs/cgroup/cpu/cgroup.procs"), "/sys/fs/cgroup/cpu/cgroup.procs"},
		{"hybrid: a unified mount elsewhere is not /sys/fs/cgroup", "0::/\n",
			has("/sys/fs/cgroup/cgroup.procs"), ""},
		{"unified", "0::/user.slice/u.scope\n",
			has("/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/user.slice/u.scope/cgroup.procs"),
			"/sys/fs/cgroup/user.slice/u.scope/cgroup.procs"},
		{"a named hierarchy only", "1:name=systemd:/\n", has("/sys/fs/cgroup/name=systemd/cgroup.procs"), ""},
		{"a path leaving the hierarchy", "8:pids:/../../etc\n", func(string) bool { return true }, ""},
		{"garbage", "no colons here\n8:pids\n", func(string) bool { return true }, ""},
	} {
		if got := procsFile([]byte(c.data), c.exists); got != c.want {
			t.Errorf("%s: procsFile = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestWarmCgroupLockMovesNothing: the early move is of this process into
// the cgroup it is in, and it succeeds (so it took the lock) without
// changing any of this process's cgroups.
func TestWarmCgroupLockMovesNothing(t *testing.T) {
	if !ownCgroups() {
		t.Skip("cshell makes no cgroups here (not root, or a read-only cgroup filesystem)")
	}
	before, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	procs := ownProcsFile()
	if procs == "" {
		t.Fatalf("no cgroup.procs file found for %q", before)
	}
	if err := <-warmCgroupLock(procs); err != nil {
		t.Fatalf("moving this process into its own cgroup (%s): %v", procs, err)
	}
	after, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("this process's cgroups changed:\n%s\nbecame\n%s", before, after)
	}
	members, err := os.ReadFile(procs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(members)), strconv.Itoa(os.Getpid())) {
		t.Errorf("%s does not list this process (%d)", procs, os.Getpid())
	}
}
