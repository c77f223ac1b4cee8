package container

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// hostView is where the restriction checks read the host's settings: the
// real /proc, /sys and / normally, a prepared copy in tests.
type hostView struct {
	root string // "/" on a real host
	euid int
	env  func(string) string
}

func realHost() hostView { return hostView{root: "/", euid: os.Geteuid(), env: os.Getenv} }

func (h hostView) read(p string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(h.root, p))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func (h hostView) exists(p string) bool {
	_, err := os.Lstat(filepath.Join(h.root, p))
	return err == nil
}

// probes are what a child of cshell's met trying what a shell's start does:
// each is the errno it failed with, 0 when it worked, -1 when not tried.
type probes struct {
	unshare   int // clone(CLONE_NEWUSER), no id map
	uidMap    int // the same with the uid_map and gid_map writes
	mountProc int // a fresh /proc mounted in new user, mount and PID namespaces
	hostname  int // sethostname in new user and UTS namespaces (a container start names its host)
	nftables  int // the egress's rules in new user and network namespaces (redirect_linux.go)
}

// runProbes tries each step in a child of its own, so that the first
// failing one names the cause.
func runProbes() probes {
	p := probes{unshare: -1, uidMap: -1, mountProc: -1, hostname: -1, nftables: -1}
	try := func(flags uintptr, mapped bool, args ...string) int {
		// This very binary, even when its file was replaced or removed
		// since it started (an upgrade under a running supervisor).
		cmd := exec.Command("/proc/self/exe", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: flags}
		if mapped {
			cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
			cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
		}
		err := cmd.Run()
		var errno syscall.Errno
		var ee *exec.ExitError
		switch {
		case err == nil:
			return 0
		case errors.As(err, &errno):
			return int(errno)
		case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 125:
			return ee.ExitCode() // the probe's own errno
		}
		return int(unix.EINVAL)
	}
	if p.unshare = try(unix.CLONE_NEWUSER, false, probeArg, "none"); p.unshare != 0 {
		return p
	}
	if p.uidMap = try(unix.CLONE_NEWUSER, true, probeArg, "none"); p.uidMap != 0 {
		return p
	}
	if p.mountProc = try(unix.CLONE_NEWUSER|unix.CLONE_NEWNS|unix.CLONE_NEWPID, true, probeArg, "proc"); p.mountProc != 0 {
		return p
	}
	if p.hostname = try(unix.CLONE_NEWUSER|unix.CLONE_NEWUTS, true, probeArg, "hostname"); p.hostname != 0 {
		return p
	}
	p.nftables = try(unix.CLONE_NEWUSER|unix.CLONE_NEWNET, true, probeArg, "nftables")
	return p
}

// probeArg makes the binary a probe child (MaybeInit).
const probeArg = "__probe"

// probeChild runs in the new namespaces: "proc" mounts a fresh /proc over
// the old one in its own mount namespace, as a container start does;
// "hostname" names the host of its own UTS namespace; "nftables" makes the
// egress's rules in its own network namespace, as a shell's init does. It
// exits with the errno of what failed.
func probeChild(what string) {
	if what == "hostname" {
		if err := unix.Sethostname([]byte("cshell")); err != nil {
			os.Exit(errnoOf(err))
		}
	}
	if what == "nftables" {
		if err := redirect(-1); err != nil {
			if e := errnoOf(err); e != 124 {
				os.Exit(e)
			}
			os.Exit(int(unix.EOPNOTSUPP)) // an answer with no errno: the kernel lacks a part
		}
	}
	if what == "proc" {
		if err := unix.Mount("", "/", "", unix.MS_PRIVATE|unix.MS_REC, ""); err != nil {
			os.Exit(errnoOf(err))
		}
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			os.Exit(errnoOf(err))
		}
	}
	os.Exit(0)
}

func errnoOf(err error) int {
	var errno syscall.Errno
	if errors.As(err, &errno) && errno > 0 && errno < 125 {
		return int(errno)
	}
	return 124
}

// engine names the container engine cshell runs in, from the marks
// engines leave, or "". A mark alone is not enough (machine images built
// from a Docker image keep /.dockerenv): an engine's confinement must be
// there too, a seccomp filter, masked /proc paths or an overlay root.
func (h hostView) engine() string {
	if !h.seccompOn() && !h.procMasked() && !h.overlayRoot() {
		return ""
	}
	switch {
	case h.env("KUBERNETES_SERVICE_HOST") != "":
		return "a Kubernetes pod"
	case h.exists("/run/.containerenv"):
		return "a Podman container"
	case h.exists("/.dockerenv"):
		return "a Docker container"
	}
	if c := h.env("container"); c != "" { // systemd's convention: podman, lxc, systemd-nspawn
		return "a container (" + c + ")"
	}
	if s, ok := h.read("/proc/1/cgroup"); ok && (strings.Contains(s, "/docker/") || strings.Contains(s, "/kubepods")) {
		return "a container"
	}
	return ""
}

// apparmor is the AppArmor label of cshell's own process ("unconfined",
// "docker-default (enforce)"), or "" without AppArmor.
func (h hostView) apparmor() string {
	for _, p := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if s, ok := h.read(p); ok && s != "" {
			return strings.TrimRight(s, "\x00")
		}
	}
	return ""
}

// procMasked reports whether something is mounted over a path inside
// /proc (an engine's masked and read-only paths), which stops a user
// namespace from mounting a fresh /proc.
func (h hostView) procMasked() bool {
	s, ok := h.read("/proc/self/mountinfo")
	if !ok {
		return false
	}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) > 4 && strings.HasPrefix(f[4], "/proc/") {
			return true
		}
	}
	return false
}

func (h hostView) overlayRoot() bool {
	s, _ := h.read("/proc/self/mountinfo")
	overlay := false
	for _, l := range strings.Split(s, "\n") { // the last mount on / is the one seen
		f := strings.Fields(l)
		if len(f) > 4 && f[4] == "/" {
			for i, x := range f {
				if x == "-" && i+1 < len(f) {
					overlay = f[i+1] == "overlay"
				}
			}
		}
	}
	return overlay
}

// status is the value of one field of this process's /proc/self/status
// ("Seccomp", "CapEff").
func (h hostView) status(key string) (string, bool) {
	s, _ := h.read("/proc/self/status")
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, key+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// seccompOn reports whether a seccomp filter holds this process.
func (h hostView) seccompOn() bool {
	v, ok := h.status("Seccomp")
	return ok && v != "0"
}

// restrictions names what stops a shell's container here, most basic
// first, from the settings it reads and the probes' results.
func (h hostView) restrictions(p probes) []Restriction {
	var rs []Restriction
	add := func(id, cause, fix string) { rs = append(rs, Restriction{id, cause, fix}) }
	where := h.engine()
	inside := ""
	if where != "" {
		inside = " (cshell runs in " + where + ": the setting is the host's, not the container's)"
	}
	if !h.exists("/proc/self/ns/user") {
		add("no-user-namespaces", "the kernel has no user namespaces (CONFIG_USER_NS)",
			"use a kernel built with them, or pass --isolation process for a shell without a sandbox")
		return rs
	}
	if v, ok := h.read("/proc/sys/user/max_user_namespaces"); ok && v == "0" || p.unshare == int(unix.ENOSPC) {
		add("max-user-namespaces", "user namespaces are switched off (sysctl user.max_user_namespaces=0)",
			"set it as root with sysctl -w user.max_user_namespaces=15000 and in /etc/sysctl.d/ to keep it"+inside)
	}
	if v, ok := h.read("/proc/sys/kernel/unprivileged_userns_clone"); ok && v == "0" && h.euid != 0 {
		add("unprivileged-userns-clone", "unprivileged user namespaces are switched off (Debian's sysctl kernel.unprivileged_userns_clone=0)",
			"set it as root with sysctl -w kernel.unprivileged_userns_clone=1 and in /etc/sysctl.d/ to keep it, or run cshell as root"+inside)
	}
	label := h.apparmor()
	confined := label != "" && label != "unconfined" && !strings.HasPrefix(label, "cshell")
	if v, ok := h.read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); ok && v == "1" && h.euid != 0 && (label == "" || label == "unconfined") {
		add("apparmor-userns", "AppArmor lets an unconfined program make a user namespace but then denies it every capability there (sysctl kernel.apparmor_restrict_unprivileged_userns=1, as on Ubuntu 23.10 and later)",
			"install a profile that grants cshell userns: cshell doctor --apparmor-profile | sudo tee /etc/apparmor.d/cshell && sudo apparmor_parser -r /etc/apparmor.d/cshell (or, for the whole machine, sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)")
	}
	if confined && (p.unshare > 0 || p.uidMap > 0 || denied(p.mountProc)) {
		fix := "run cshell unconfined or under a profile that allows userns and mount"
		if where != "" {
			fix = "start the container with --security-opt apparmor=unconfined (Kubernetes: securityContext.appArmorProfile.type: Unconfined); docs/containers.md has the settings"
		}
		add("apparmor-confined", "cshell runs under the AppArmor profile "+label+", which denies what a container start needs", fix)
	}
	if p.unshare == int(unix.EPERM) && h.seccompOn() && len(rs) == 0 {
		cause := "a seccomp filter on cshell's own process (Seccomp: 2 in /proc/self/status) refuses new user namespaces"
		fix := "run cshell without that filter, or with one that allows unshare, clone with CLONE_NEWUSER, mount, pivot_root, setns and keyctl"
		if where != "" {
			cause = where + "'s default seccomp profile refuses new user namespaces (unshare, clone with CLONE_NEWUSER)"
			fix = "start the container with a seccomp profile that allows them, or --security-opt seccomp=unconfined (Kubernetes: securityContext.seccompProfile.type: Unconfined); docs/containers.md has the settings"
		}
		add("seccomp", cause, fix)
	}
	if (denied(p.mountProc)) && len(rs) == 0 {
		cause := "a fresh /proc cannot be mounted in a new user namespace"
		if h.procMasked() {
			cause = "paths inside /proc are masked (mounts over /proc/kcore, /proc/sys and others, as container engines do), so the kernel refuses a new user namespace a fresh /proc"
		}
		fix := "unmask /proc for cshell's container"
		if where != "" || h.procMasked() {
			fix = "start the container with --security-opt systempaths=unconfined (Podman: --security-opt unmask=ALL; Kubernetes: securityContext.procMount: Unmasked with hostUsers: false); docs/containers.md has the settings"
		}
		add("masked-proc", cause, fix)
	}
	if denied(p.hostname) && h.seccompOn() && len(rs) == 0 {
		// Podman's default profile lets user namespaces through, and
		// refuses what a container start does in them without
		// CAP_SYS_ADMIN, sethostname first.
		cause := "a seccomp filter on cshell's own process (Seccomp: 2 in /proc/self/status) refuses sethostname, which a container start calls in its own UTS namespace"
		fix := "run cshell without that filter, or with one that allows sethostname, mount, pivot_root and setns"
		if where != "" {
			cause = where + "'s default seccomp profile lets user namespaces through but refuses sethostname, which a container start calls in them"
			fix = "start the container with --security-opt seccomp=unconfined (Kubernetes: securityContext.seccompProfile.type: Unconfined); docs/containers.md has the settings"
		}
		add("seccomp-sethostname", cause, fix)
	}
	if p.nftables > 0 && len(rs) == 0 {
		add("nftables", "the kernel cannot make the rules that take a shell's direct connections to cshell (nftables' NAT in a network namespace of its own: "+syscall.Errno(p.nftables).Error()+"), so no shell with a way out can start",
			"as root, load the modules (modprobe -a nf_tables nft_chain_nat nft_redir nf_conntrack) or use a kernel with them; or start shells without a way out (network.allowGrants false and nothing allowed)"+inside)
	}
	if len(rs) == 0 && (p.unshare > 0 || p.uidMap > 0) {
		step := "make a user namespace"
		e := p.unshare
		if p.unshare == 0 {
			step, e = "write its uid_map", p.uidMap
		}
		add("user-namespaces", "a child of cshell could not "+step+" ("+syscall.Errno(e).Error()+")",
			"run cshell doctor on the host for the cause, or pass --isolation process for a shell without a sandbox")
	}
	return rs
}

func denied(errno int) bool { return errno == int(unix.EPERM) || errno == int(unix.EACCES) }

// Restrictions probes this host and names what stops a shell's
// container here; none when a container can start.
func Restrictions() []Restriction { return realHost().restrictions(runProbes()) }
