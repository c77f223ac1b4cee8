package container

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// A rootless user's cgroups, where systemd delegates them: on a cgroup v2
// host whose systemd runs a manager for the user (a login, or lingering),
// that manager owns a subtree of the cgroup tree for the user
// (user@UID.service, Delegate=yes) and makes transient scopes there on
// request. cshell then asks it, through libcontainer's systemd driver
// and the user's D-Bus, for a scope per shell (cshell-ID.scope in
// user.slice, Delegate=yes) that holds the shell's limits, as runc does
// for a rootless user with --systemd-cgroup. Where that is missing,
// cshell's watchdog holds --memory and --pids, and --cpus is refused.

// delegation is what a user's systemd manager delegates to this user.
type delegation struct {
	controllers []string // of the manager's cgroup: memory, pids, cpu…
	bus         string   // the user's D-Bus socket
}

// has reports whether the controllers include every one of want.
func (d delegation) has(want ...string) bool {
	for _, w := range want {
		if !slices.Contains(d.controllers, w) {
			return false
		}
	}
	return true
}

// delegated is what this rootless user is delegated here; its controllers
// are empty where nothing is (root, cgroup v1 or hybrid, no systemd, no
// user manager, no user bus).
var delegated = sync.OnceValue(func() delegation {
	if fullRoot() {
		return delegation{}
	}
	return findDelegation("/sys/fs/cgroup", os.Getuid(), os.Getenv("XDG_RUNTIME_DIR"), os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
})

// findDelegation looks under root (the cgroup v2 mount, with systemd as
// init) for user uid's manager, and for its bus in runtimeDir (or the
// session bus address).
func findDelegation(root string, uid int, runtimeDir, busAddr string) delegation {
	var st unix.Statfs_t
	if unix.Statfs(root, &st) != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		return delegation{}
	}
	if fi, err := os.Stat("/run/systemd/system"); err != nil || !fi.IsDir() {
		return delegation{} // systemd is not the init
	}
	u := strconv.Itoa(uid)
	manager := filepath.Join(root, "user.slice", "user-"+u+".slice", "user@"+u+".service")
	return managerDelegation(manager, uid, runtimeDir, busAddr)
}

// managerDelegation reads what the manager's cgroup (a directory uid must
// own) delegates, where the user's bus is a socket.
func managerDelegation(manager string, uid int, runtimeDir, busAddr string) delegation {
	var mst unix.Stat_t
	if unix.Stat(manager, &mst) != nil || int(mst.Uid) != uid {
		return delegation{} // no manager, or its cgroup is not the user's
	}
	bus := ""
	if path, ok := strings.CutPrefix(busAddr, "unix:path="); ok {
		bus, _, _ = strings.Cut(path, ",")
	} else if runtimeDir != "" {
		bus = filepath.Join(runtimeDir, "bus")
	}
	var bst unix.Stat_t
	if bus == "" || unix.Stat(bus, &bst) != nil || bst.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return delegation{}
	}
	b, err := os.ReadFile(filepath.Join(manager, "cgroup.controllers"))
	if err != nil {
		return delegation{}
	}
	return delegation{controllers: strings.Fields(string(b)), bus: bus}
}

// delegatedLimits reports whether a rootless shell's limits are held by a
// scope the user's systemd manager makes: memory and pids delegated.
func delegatedLimits() bool { return delegated().has("memory", "pids") }

// CPUsHeld reports whether a shell's cgroup can hold --cpus: root's own,
// or a delegated scope with the cpu controller.
func CPUsHeld() bool { return ownCgroups() || delegatedLimits() && delegated().has("cpu") }

// limitCgroups reports whether a shell gets a cgroup that holds its
// limits: root's own, or a delegated scope.
func limitCgroups() bool { return ownCgroups() || delegatedLimits() }
