package container

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// view prepares a host's /proc and / in a directory: each file's content.
func view(t *testing.T, euid int, env map[string]string, files map[string]string) hostView {
	t.Helper()
	root := t.TempDir()
	files["/proc/self/ns/user"] = ""
	for p, c := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return hostView{root: root, euid: euid, env: func(k string) string { return env[k] }}
}

const (
	hostMounts   = "22 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n23 22 0:21 / /proc rw - proc proc rw\n"
	engineMounts = "600 500 0:50 / / rw - overlay overlay rw\n601 600 0:52 / /proc rw - proc proc rw\n" +
		"602 601 0:53 /null /proc/kcore rw - tmpfs tmpfs rw\n603 601 0:52 /sys /proc/sys ro - proc proc rw\n"
)

var ok = probes{}

func TestRestrictions(t *testing.T) {
	cases := []struct {
		name  string
		h     hostView
		p     probes
		id    string
		words []string // in the cause or the fix
	}{
		{"a plain host", view(t, 1000, nil, map[string]string{"/proc/self/mountinfo": hostMounts, "/proc/self/status": "Seccomp:\t0\n"}), ok, "", nil},
		{"a machine image with /.dockerenv but no engine", view(t, 1000, nil, map[string]string{"/.dockerenv": "", "/proc/self/mountinfo": hostMounts, "/proc/self/status": "Seccomp:\t0\n"}), ok, "", nil},
		{"Ubuntu 24.04", view(t, 1000, nil, map[string]string{
			"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n", "/proc/self/attr/apparmor/current": "unconfined\n",
			"/proc/self/mountinfo": hostMounts}), probes{uidMap: int(unix.EPERM)},
			"apparmor-userns", []string{"apparmor_restrict_unprivileged_userns=1", "cshell doctor --apparmor-profile", "apparmor_parser -r"}},
		{"Ubuntu 24.04 with cshell's profile", view(t, 1000, nil, map[string]string{
			"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n", "/proc/self/attr/apparmor/current": "cshell (unconfined)\n",
			"/proc/self/mountinfo": hostMounts}), ok, "", nil},
		{"Ubuntu 24.04 as root", view(t, 0, nil, map[string]string{
			"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1\n", "/proc/self/attr/current": "unconfined",
			"/proc/self/mountinfo": hostMounts}), ok, "", nil},
		{"max_user_namespaces=0", view(t, 1000, nil, map[string]string{"/proc/sys/user/max_user_namespaces": "0\n"}), probes{unshare: int(unix.ENOSPC)},
			"max-user-namespaces", []string{"user.max_user_namespaces=0", "sysctl -w user.max_user_namespaces="}},
		{"Debian's old switch", view(t, 1000, nil, map[string]string{"/proc/sys/kernel/unprivileged_userns_clone": "0\n"}), probes{unshare: int(unix.EPERM)},
			"unprivileged-userns-clone", []string{"kernel.unprivileged_userns_clone=0", "sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"Docker's default", view(t, 1000, nil, map[string]string{"/.dockerenv": "", "/proc/self/mountinfo": engineMounts,
			"/proc/self/status": "Name:\tcshell\nSeccomp:\t2\nSeccomp_filters:\t1\n", "/proc/self/attr/current": "docker-default (enforce)"}),
			probes{unshare: int(unix.EPERM)}, "apparmor-confined", []string{"docker-default", "--security-opt apparmor=unconfined"}},
		{"Docker's seccomp, no AppArmor", view(t, 0, nil, map[string]string{"/.dockerenv": "", "/proc/self/mountinfo": engineMounts,
			"/proc/self/status": "Seccomp:\t2\n"}),
			probes{unshare: int(unix.EPERM)}, "seccomp", []string{"a Docker container's default seccomp profile", "seccomp=unconfined", "seccompProfile"}},
		{"Podman's default seccomp", view(t, 0, nil, map[string]string{"/run/.containerenv": "", "/proc/self/mountinfo": engineMounts,
			"/proc/self/status": "Seccomp:\t2\n"}),
			probes{hostname: int(unix.EPERM)}, "seccomp-sethostname", []string{"a Podman container's default seccomp profile", "refuses sethostname", "seccomp=unconfined"}},
		{"a pod with masked /proc", view(t, 1000, map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, map[string]string{"/proc/self/mountinfo": engineMounts,
			"/proc/self/status": "Seccomp:\t0\n"}),
			probes{mountProc: int(unix.EPERM)}, "masked-proc", []string{"masked", "procMount: Unmasked", "systempaths=unconfined"}},
		{"no user namespaces at all", hostView{root: t.TempDir(), euid: 1000, env: func(string) string { return "" }}, probes{unshare: int(unix.EINVAL)},
			"no-user-namespaces", []string{"CONFIG_USER_NS", "--isolation process"}},
		{"a kernel without nftables' NAT", view(t, 1000, nil, map[string]string{"/proc/self/mountinfo": hostMounts, "/proc/self/status": "Seccomp:\t0\n"}), probes{nftables: int(unix.EOPNOTSUPP)},
			"nftables", []string{"nftables' NAT", "modprobe -a nf_tables", "network.allowGrants false"}},
		{"something else", view(t, 1000, nil, map[string]string{"/proc/self/mountinfo": hostMounts}), probes{unshare: 0, uidMap: int(unix.EPERM)},
			"user-namespaces", []string{"uid_map", "operation not permitted"}},
	}
	for _, c := range cases {
		rs := c.h.restrictions(c.p)
		if c.id == "" {
			if len(rs) != 0 {
				t.Errorf("%s: restrictions %+v, want none", c.name, rs)
			}
			continue
		}
		if len(rs) == 0 || rs[0].ID != c.id {
			t.Errorf("%s: restrictions %+v, want %s first", c.name, rs, c.id)
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(rs[0].Sentence(), w) {
				t.Errorf("%s: %q lacks %q", c.name, rs[0].Sentence(), w)
			}
		}
	}
}

// The probes on this machine, which allows everything a shell needs.
func TestProbesHere(t *testing.T) {
	p := runProbes()
	if p.unshare != 0 || p.uidMap != 0 || p.mountProc != 0 || p.hostname != 0 || p.nftables != 0 {
		t.Fatalf("probes on this machine: %+v, want all 0", p)
	}
	if rs := Restrictions(); len(rs) != 0 {
		t.Errorf("restrictions on this machine: %+v", rs)
	}
}
