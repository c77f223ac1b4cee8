package container

import (
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFindDelegation: a directory that is no cgroup2 mount delegates
// nothing; a user's manager cgroup that the user owns, with its bus a
// socket, gives its controllers; anything short of that gives none.
// (The whole lookup on a real systemd host: hack/lab/cgroup2.sh.)
func TestFindDelegation(t *testing.T) {
	if d := findDelegation(t.TempDir(), os.Getuid(), "", ""); len(d.controllers) != 0 {
		t.Errorf("a directory that is no cgroup2 mount: %+v", d)
	}
	d := delegation{controllers: []string{"cpuset", "cpu", "io", "memory", "pids"}}
	if !d.has("memory", "pids") || !d.has("cpu") || d.has("hugetlb") || (delegation{}).has("memory") {
		t.Errorf("has: %+v", d)
	}

	manager, run := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(manager, "cgroup.controllers"), []byte("cpu memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bus := filepath.Join(run, "bus")
	uid := os.Getuid()
	if d := managerDelegation(manager, uid, run, ""); len(d.controllers) != 0 {
		t.Errorf("no bus yet: %+v", d)
	}
	if err := os.WriteFile(bus, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if d := managerDelegation(manager, uid, run, ""); len(d.controllers) != 0 {
		t.Errorf("a bus that is a file, not a socket: %+v", d)
	}
	os.Remove(bus)
	l, err := net.Listen("unix", bus)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := delegation{controllers: []string{"cpu", "memory", "pids"}, bus: bus}
	if d := managerDelegation(manager, uid, run, ""); !reflect.DeepEqual(d, want) {
		t.Errorf("$XDG_RUNTIME_DIR/bus: %+v, want %+v", d, want)
	}
	if d := managerDelegation(manager, uid, "", "unix:path="+bus+",guid=0123"); !reflect.DeepEqual(d, want) {
		t.Errorf("DBUS_SESSION_BUS_ADDRESS: %+v, want %+v", d, want)
	}
	if d := managerDelegation(manager, uid+1, run, ""); len(d.controllers) != 0 {
		t.Errorf("a manager cgroup another user owns: %+v", d)
	}
	if d := managerDelegation(filepath.Join(manager, "missing"), uid, run, ""); len(d.controllers) != 0 {
		t.Errorf("no manager: %+v", d)
	}
}
