package container

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

func checks(rs []Restriction) []Check {
	var cs []Check
	cs = append(cs, userNamespaces(rs))
	cs = append(cs, subordinateIDs())
	cs = append(cs, cgroups()...)
	cs = append(cs, seccomp(), nesting(), limits())
	return cs
}

// userNamespaces starts a real child in every namespace a shell gets.
func userNamespaces(rs []Restriction) Check {
	c := Check{Name: "user namespaces"}
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	cmd := exec.Command(truePath)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
			unix.CLONE_NEWIPC | unix.CLONE_NEWUTS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
	err = cmd.Run()
	switch {
	case err != nil && len(rs) > 0:
		c.Detail = "cannot create the namespaces a shell needs: " + rs[0].Cause
	case err != nil:
		c.Detail = fmt.Sprintf("cannot create user, mount, PID, network, IPC and UTS namespaces: %v", err)
	case len(rs) > 0:
		c.Detail = "user, mount, PID, network, IPC and UTS namespaces can be created, but " + rs[0].Cause
	default:
		c.OK = true
		c.Detail = "user, mount, PID, network, IPC and UTS namespaces can be created by uid " + strconv.Itoa(os.Geteuid()) + ", and a fresh /proc mounted in them"
	}
	return c
}

// subordinateIDs looks for this user in /etc/subuid. cshell maps only the
// user's own id, so none are needed; they matter to other tools.
func subordinateIDs() Check {
	c := Check{Name: "subordinate ids", OK: true}
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	ranges := 0
	if f, err := os.Open("/etc/subuid"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			fields := strings.Split(s.Text(), ":")
			if len(fields) == 3 && (fields[0] == name || fields[0] == strconv.Itoa(os.Getuid())) {
				ranges++
			}
		}
		f.Close()
	}
	if ranges == 0 {
		c.Detail = "none for " + name + " in /etc/subuid; not needed: cshell maps only your own uid to root inside"
	} else {
		c.Detail = fmt.Sprintf("%d range(s) for %s in /etc/subuid; not needed: cshell maps only your own uid", ranges, name)
	}
	return c
}

func cgroups() []Check {
	version := Check{Name: "cgroup version", OK: true}
	var st unix.Statfs_t
	v2 := unix.Statfs("/sys/fs/cgroup", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
	hybrid := !v2 && unix.Statfs("/sys/fs/cgroup/unified", &st) == nil && st.Type == unix.CGROUP2_SUPER_MAGIC
	switch {
	case v2:
		version.Detail = "cgroup v2 (unified)"
	case hybrid:
		version.Detail = "cgroup v1 with a cgroup2 mount at /sys/fs/cgroup/unified (hybrid)"
	default:
		version.Detail = "cgroup v1"
	}
	deleg := Check{Name: "cgroup delegation"}
	switch {
	case ownCgroups():
		deleg.OK = true
		deleg.Detail = "root creates a cgroup per shell"
	case os.Geteuid() == 0:
		deleg.OK = true
		deleg.Detail = "the cgroup filesystem is read-only here (as a container engine mounts it): root's shells get no cgroup, and cshell's watchdog holds --memory and --pids as for a rootless user"
	case delegatedLimits():
		deleg.OK = true
		d := delegated()
		deleg.Detail = "your systemd manager delegates " + strings.Join(d.controllers, ", ") + " to you (user@" + strconv.Itoa(os.Getuid()) + ".service): each shell gets a scope of its own (cshell-ID.scope, made through " + d.bus + ") that holds its limits"
		if !d.has("cpu") {
			deleg.Detail += "; --cpus needs the cpu controller, which it does not delegate"
		}
	case v2 && ownCgroupWritable():
		deleg.OK = true
		deleg.Detail = "your cgroup is writable, but no systemd manager of yours makes scopes for cshell (it needs systemd as init, your user manager, and your D-Bus at $XDG_RUNTIME_DIR/bus): cshell's watchdog holds --memory and --pids for your shells; --cpus needs a cgroup"
	case v2:
		deleg.OK = true
		deleg.Detail = "your cgroup is not delegated to you (a systemd user manager with Delegate=yes, and your D-Bus): cshell's watchdog holds --memory and --pids for your shells; --cpus needs a cgroup"
	default:
		deleg.OK = true
		deleg.Detail = "cgroup v1 cannot be delegated to a user: cshell's watchdog holds --memory and --pids for your shells; --cpus needs a cgroup"
	}
	return []Check{version, deleg}
}

func ownCgroupWritable() bool {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return unix.Access("/sys/fs/cgroup"+p, unix.W_OK) == nil
		}
	}
	return false
}

func seccomp() Check {
	c := Check{Name: "syscall filter"}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		c.Detail = "the kernel has no seccomp (CONFIG_SECCOMP_FILTER): container shells cannot start with cshell's filter; use a kernel that has it"
		return c
	}
	c.OK = true
	c.Detail = "on in every container shell: cshell's own, modelled on Docker's default profile (no new user namespaces, io_uring, bpf, keyctl, userfaultfd, perf_event_open, kexec, modules, swap, reboot or clock setting; EPERM, ENOSYS for clone3), built into the binary"
	if realHost().seccompOn() {
		c.Detail += "; cshell itself already runs under a filter (Seccomp: 2, a container engine's), which comes on top"
	}
	return c
}

func nesting() Check {
	c := Check{Name: "nested user namespaces", OK: true}
	c.Detail = "refused in shells by default; --allow-userns (config sandbox.allowUserNamespaces) lets a shell make its own, for Chromium's sandbox, bubblewrap or rootless podman"
	if os.Geteuid() == 0 {
		c.Detail += "; as root a nested sandbox cannot mount its own /proc (the shell's /proc/sys stays read-only: it would be the host's to write)"
	}
	return c
}

func limits() Check {
	c := Check{Name: "limits", OK: true}
	if LimitsEnforcement() == ByCgroup {
		v := "v1"
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			v = "v2"
		}
		c.Detail = "--memory, --pids and --cpus are held by each shell's cgroup (root, cgroup " + v + ")"
		if !ownCgroups() {
			c.Detail = "--memory and --pids are held by each shell's scope, which your systemd manager makes (cgroup v2)"
			if CPUsHeld() {
				c.Detail = "--memory, --pids and --cpus are held by each shell's scope, which your systemd manager makes (cgroup v2)"
			}
		}
		return c
	}
	c.Detail = "--memory and --pids are held by cshell's watchdog (memory sampled every 100 ms, every 10 ms past half the bound; processes bounded by the kernel's per-user-namespace limit too); --cpus needs a cgroup, which cshell makes only as root here"
	return c
}

func autoChoice(cs []Check, rs []Restriction) (Isolation, string) {
	if len(rs) > 0 {
		return Container, "auto asks for a container, which cannot start here (" + rs[0].Cause +
			"); cshell will refuse rather than run without a sandbox: " + rs[0].Fix
	}
	for _, c := range cs {
		if c.Name == "user namespaces" && !c.OK {
			return Container, "auto asks for a container, which cannot start here (" + c.Detail +
				"); cshell will refuse rather than run without a sandbox: fix the setting or pass --isolation process"
		}
	}
	return Container, "auto uses a rootless container: this machine allows every namespace it needs"
}
