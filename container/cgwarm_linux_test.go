package container

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestStartsShell(t *testing.T) {
	for args, want := range map[string]bool{
		"run -- true":                         true,
		"run -d --expose 5173 -- npm run dev": true,
		"--json run true":                     true,
		"--state-dir /x --config /y run true": true,
		"--state-dir=/x run true":             true,
		"__supervise 7":                       true,  // shells.SuperviseArg: a background shell's supervisor
		"--state-dir run ps":                  false, // "run" is the state dir here
		"ps":                                  false,
		"serve":                               false,
		"output run":                          false,
		"--json":                              false,
		"--state-dir":                         false,
		"":                                    false,
	} {
		if got := startsShell(strings.Fields(args)); got != want {
			t.Errorf("startsShell(%q) = %v, want %v", args, got, want)
		}
	}
}

func TestProcsFile(t *testing.T) {
	// root: a directory holding these files under their paths
	root := func(files ...string) string {
		dir := t.TempDir()
		for _, f := range files {
			if err := os.MkdirAll(filepath.Dir(dir+f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir+f, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	hybrid := "9:name=systemd:/\n8:pids:/user.slice\n4:memory:/a/b\n2:cpu,cpuacct:/\n0::/\n"
	for _, c := range []struct {
		name, data, root, want string
	}{
		{"hybrid: the first controller's hierarchy", hybrid,
			root("/sys/fs/cgroup/pids/user.slice/cgroup.procs", "/sys/fs/cgroup/memory/a/b/cgroup.procs"),
			"/sys/fs/cgroup/pids/user.slice/cgroup.procs"},
		{"hybrid: a controller not mounted is passed over", hybrid,
			root("/sys/fs/cgroup/cpu/cgroup.procs"), "/sys/fs/cgroup/cpu/cgroup.procs"},
		{"hybrid: a unified mount elsewhere is not /sys/fs/cgroup", "0::/\n",
			root("/sys/fs/cgroup/cgroup.procs"), ""},
		{"unified", "0::/user.slice/u.scope\n",
			root("/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/user.slice/u.scope/cgroup.procs"),
			"/sys/fs/cgroup/user.slice/u.scope/cgroup.procs"},
		{"unified, at the root", "0::/",
			root("/sys/fs/cgroup/cgroup.controllers", "/sys/fs/cgroup/cgroup.procs"), "/sys/fs/cgroup/cgroup.procs"},
		{"a named hierarchy only", "1:name=systemd:/\n", root("/sys/fs/cgroup/name=systemd/cgroup.procs"), ""},
		{"a path leaving the hierarchy", "8:pids:/../../etc\n",
			root("/sys/fs/cgroup/pids/cgroup.procs", "/sys/fs/etc/cgroup.procs"), ""},
		{"a path ending in ..", "8:pids:/a/..\n", root("/sys/fs/cgroup/pids/cgroup.procs"), ""},
		{"dots that do not leave", "8:pids:/a..b/..c\n",
			root("/sys/fs/cgroup/pids/a..b/..c/cgroup.procs"), "/sys/fs/cgroup/pids/a..b/..c/cgroup.procs"},
		{"garbage", "no colons here\n8:pids\n8:pids:relative\n", root("/sys/fs/cgroup/pids/cgroup.procs"), ""},
		{"a line past the buffer", "8:pids:/" + strings.Repeat("a", 5000) + "\n2:cpu:/\n",
			root("/sys/fs/cgroup/cpu/cgroup.procs"), "/sys/fs/cgroup/cpu/cgroup.procs"},
	} {
		if got := procsFile([]byte(c.data), c.root); got != c.want {
			t.Errorf("%s: procsFile = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestMoveIntoOwnCgroupMovesNothing: the early move is of this process into
// the cgroup it is in, and it succeeds (so it took the lock) without
// changing any of this process's cgroups.
func TestMoveIntoOwnCgroupMovesNothing(t *testing.T) {
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
	if err := moveIntoCgroup(procs); err != nil {
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

// TestMoveOnlyWhereListed: the constructor's move is made only into a
// cgroup whose cgroup.procs lists this process (a file standing for one
// here), wherever in the file the pid is.
func TestMoveOnlyWhereListed(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, pids ...int) string {
		var b strings.Builder
		for _, p := range pids {
			b.WriteString(strconv.Itoa(p) + "\n")
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	self := os.Getpid()
	others := make([]int, 0, 3000)
	for i := range 3000 { // past one read of the file
		if p := 100000 + i; p != self {
			others = append(others, p)
		}
	}
	notListed := write("not-listed", others...)
	if err := moveIntoCgroup(notListed); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("a cgroup.procs without this process: %v, want ENOENT", err)
	}
	if data, _ := os.ReadFile(notListed); strings.HasPrefix(string(data), "0") {
		t.Errorf("written to although this process is not listed")
	}
	near := write("prefix", self*10, self/10+1)
	if err := moveIntoCgroup(near); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("pids that only begin or end like this one's: %v, want ENOENT", err)
	}
	listed := write("listed", append(others, self)...)
	if err := moveIntoCgroup(listed); err != nil {
		t.Errorf("a cgroup.procs listing this process last: %v", err)
	}
	if data, _ := os.ReadFile(listed); !strings.HasPrefix(string(data), "0") {
		t.Errorf("not written to although this process is listed")
	}
}

// ownProcsFile is the cgroup.procs file of the cgroup this process is in,
// on one hierarchy (see procsFile).
func ownProcsFile() string {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	return procsFile(data, "")
}
