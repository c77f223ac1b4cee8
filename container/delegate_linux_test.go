package container

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestFindDelegation: a user's manager cgroup that the user owns, on a
// cgroup v2 mount, with its bus, gives its controllers; anything short of
// that gives none. The cgroup v2 mount is faked by the test only where
// the machine has one; the rest of the rules are checked anyway.
func TestFindDelegation(t *testing.T) {
	if d := findDelegation(t.TempDir(), os.Getuid(), "", ""); d.has("memory") || len(d.controllers) != 0 {
		t.Errorf("a directory that is no cgroup2 mount: %+v", d)
	}
	d := delegation{controllers: []string{"cpuset", "cpu", "io", "memory", "pids"}}
	if !d.has("memory", "pids") || !d.has("cpu") || d.has("hugetlb") {
		t.Errorf("has: %+v", d)
	}
	if (delegation{}).has("memory") {
		t.Error("no delegation has memory")
	}
	// The bus: a socket at $XDG_RUNTIME_DIR/bus or named by the address.
	run := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(run, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
		t.Log("no cgroup v2 here: the manager lookup is tested in the cgroup-v2 lab (hack/lab/cgroup2.sh)")
		return
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		t.Log("systemd is not the init here: the manager lookup is tested in the cgroup-v2 lab")
		return
	}
	got := findDelegation("/sys/fs/cgroup", os.Getuid(), run, "")
	t.Logf("this machine: %+v", got)
}
