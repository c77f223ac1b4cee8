//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	mobyseccomp "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// engineBundle writes a runc bundle that runs script (sh) the way a
// container engine runs a container: Docker's default capabilities,
// its own PID, mount, IPC, UTS and cgroup namespaces (a user namespace
// too when this test is not root: rootless runc), the host's directories
// read-only, a private /tmp and /run, the cgroup filesystem read-only, and
// the host's network (docker run --network host). dockerSeccomp adds
// Docker's default seccomp profile (moby/profiles, the one dockerd builds
// in); masked adds its masked and read-only /proc paths and its marker
// file. With neither it is configured as docs/containers.md says:
// seccomp=unconfined and systempaths=unconfined.
func engineBundle(t *testing.T, dockerSeccomp, masked bool, script string) string {
	t.Helper()
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs")
	caps := []string{"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW", "CAP_SETGID",
		"CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"}
	sp := &specs.Spec{
		Version: "1.0.2",
		Root:    &specs.Root{Path: "rootfs", Readonly: true},
		Process: &specs.Process{
			Args:         []string{"/bin/sh", "-c", script},
			Env:          []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/tmp/home"},
			Cwd:          "/tmp",
			Capabilities: &specs.LinuxCapabilities{Bounding: caps, Effective: caps, Permitted: caps},
		},
		Hostname: "engine",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc"},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{Destination: "/sys", Type: "bind", Source: "/sys", Options: []string{"rbind", "rro", "nosuid", "noexec", "nodev"}}, // the cgroup filesystem read-only too, as Docker mounts it
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
			{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=755"}},
		},
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.MountNamespace}, {Type: specs.IPCNamespace},
				{Type: specs.UTSNamespace}, {Type: specs.CgroupNamespace}},
		},
	}
	if os.Geteuid() != 0 {
		sp.Linux.Namespaces = append(sp.Linux.Namespaces, specs.LinuxNamespace{Type: specs.UserNamespace})
		sp.Linux.UIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(os.Geteuid()), Size: 1}}
		sp.Linux.GIDMappings = []specs.LinuxIDMapping{{ContainerID: 0, HostID: uint32(os.Getegid()), Size: 1}}
	}
	entries, err := os.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := "/" + e.Name()
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(name)
			if err := os.Symlink(target, filepath.Join(rootfs, e.Name())); err != nil {
				t.Fatal(err)
			}
			continue
		case !e.IsDir():
			continue
		}
		if err := os.Mkdir(filepath.Join(rootfs, e.Name()), 0o755); err != nil {
			t.Fatal(err)
		}
		if map[string]bool{"/proc": true, "/dev": true, "/sys": true, "/tmp": true, "/run": true, "/lost+found": true}[name] ||
			os.Geteuid() != 0 && exec.Command("test", "-x", name).Run() != nil {
			continue
		}
		sp.Mounts = append(sp.Mounts, specs.Mount{Destination: name, Type: "bind", Source: name, Options: []string{"rbind", "ro", "nosuid", "nodev"}})
	}
	if masked {
		writeFile(t, filepath.Join(rootfs, ".dockerenv"), "")
		sp.Linux.MaskedPaths = []string{"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
			"/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", "/sys/devices/virtual/powercap"}
		sp.Linux.ReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
	}
	if dockerSeccomp {
		if sp.Linux.Seccomp, err = mobyseccomp.GetDefaultProfile(sp); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.MarshalIndent(sp, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "config.json"), string(b))
	return dir
}

// runInEngine runs the bundle with runc and returns its output.
func runInEngine(t *testing.T, bundle, name string) (string, error) {
	t.Helper()
	cmd := exec.Command("runc", "--root", t.TempDir(), "run", "--bundle", bundle, name)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// doctorInEngine runs doctor --json, then a run, in the bundle's
// container: the restrictions doctor names and everything printed.
func doctorInEngine(t *testing.T, dockerSeccomp, masked bool, name string) ([]struct{ ID, Cause, Fix string }, string) {
	t.Helper()
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatalf("runc is needed (hack/test.sh installs it): %v", err)
	}
	script := fmt.Sprintf(`mkdir -p /tmp/home /tmp/work && cd /tmp/work && %[1]s --json doctor; echo "doctor-exit=$?"; %[1]s run -- true; echo "run-exit=$?"`, cshellBin)
	out, err := runInEngine(t, engineBundle(t, dockerSeccomp, masked, script), name)
	if err != nil {
		t.Fatalf("runc: %v\n%s", err, out)
	}
	var r struct {
		Restrictions []struct{ ID, Cause, Fix string }
	}
	start := strings.Index(out, "{")
	if start < 0 || json.NewDecoder(strings.NewReader(out[start:])).Decode(&r) != nil {
		t.Fatalf("no doctor report in %q", out)
	}
	return r.Restrictions, out
}

// TestInsideAnEngineDefault: inside a container configured as Docker's
// default, doctor names the seccomp profile and the fix, and a run says
// the same instead of the runtime's error.
func TestInsideAnEngineDefault(t *testing.T) {
	rs, out := doctorInEngine(t, true, true, "cshell-engine-default")
	if len(rs) == 0 || rs[0].ID != "seccomp" ||
		!strings.Contains(rs[0].Cause, "a Docker container's default seccomp profile") ||
		!strings.Contains(rs[0].Fix, "seccomp=unconfined") || !strings.Contains(rs[0].Fix, "docs/containers.md") {
		t.Errorf("doctor inside Docker's default: %+v, want the seccomp profile named with its fix", rs)
	}
	if !strings.Contains(out, "doctor-exit=0") || !strings.Contains(out, "run-exit=125") ||
		!strings.Contains(out, "cshell: the sandbox could not start: a Docker container's default seccomp profile refuses new user namespaces") {
		t.Errorf("inside Docker's default:\n%s", out)
	}
}

// TestInsideAnEngineWithMaskedProc: seccomp unconfined but /proc still
// masked (Docker's --security-opt seccomp=unconfined alone): doctor names
// the masks and the setting that lifts them.
func TestInsideAnEngineWithMaskedProc(t *testing.T) {
	rs, out := doctorInEngine(t, false, true, "cshell-engine-masked")
	if len(rs) == 0 || rs[0].ID != "masked-proc" || !strings.Contains(rs[0].Cause, "masked") ||
		!strings.Contains(rs[0].Fix, "systempaths=unconfined") || !strings.Contains(rs[0].Fix, "procMount: Unmasked") {
		t.Errorf("doctor with masked /proc: %+v, want masked-proc with its fix", rs)
	}
	if !strings.Contains(out, "run-exit=125") || !strings.Contains(out, "cshell: the sandbox could not start: paths inside /proc are masked") {
		t.Errorf("run with masked /proc:\n%s", out)
	}
}

// TestInsideAnEngineAsDocumented: with docs/containers.md's settings, a
// foreground run, a background shell with --expose and --ready, and an
// allowed host through the proxy all work inside the container.
func TestInsideAnEngineAsDocumented(t *testing.T) {
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatalf("runc is needed (hack/test.sh installs it): %v", err)
	}
	remote := os.Getenv("CSHELL_TEST_REMOTE")
	if remote == "" {
		t.Skip("CSHELL_TEST_REMOTE is not set: hack/test.sh makes the remote host")
	}
	port := freePort(t)
	script := fmt.Sprintf(`set -e
mkdir -p /tmp/home /tmp/work && cd /tmp/work
C=%[1]s
$C doctor | grep -q "^FAIL" && { $C doctor; exit 1; }
$C run -- 'echo foreground-ok; touch /usr/x 2>/dev/null || echo host-read-only'
$C run -d --name web --expose %[2]d --ready -- 'echo served > index.html; exec python3 -m http.server %[2]d --bind 127.0.0.1'
curl -fsS http://127.0.0.1:%[2]d/index.html
$C run --allow-host %[3]s -- 'curl -fsS http://%[3]s/hello'
$C kill web --grace 1
echo all-done`, cshellBin, port, remote)
	out, err := runInEngine(t, engineBundle(t, false, false, script), "cshell-engine-documented")
	if err != nil {
		t.Fatalf("runc: %v\n%s", err, out)
	}
	for _, want := range []string{"foreground-ok", "host-read-only", "served", "hello from the remote", "killed", "all-done"} {
		if !strings.Contains(out, want) {
			t.Errorf("inside the documented container: no %q in\n%s", want, out)
		}
	}
}

// TestSpecInsideAnEngine: a bundle written where cshell makes no cgroups
// of its own (inside an engine, root or not) keeps the limits asked for.
func TestSpecInsideAnEngine(t *testing.T) {
	if _, err := exec.LookPath("runc"); err != nil {
		t.Fatalf("runc is needed (hack/test.sh installs it): %v", err)
	}
	script := fmt.Sprintf(`mkdir -p /tmp/home /tmp/work && cd /tmp/work && %s spec --bundle /tmp/b -w /tmp/work --memory 64m --pids 50 -- true >/dev/null && cat /tmp/b/config.json`, cshellBin)
	out, err := runInEngine(t, engineBundle(t, false, false, script), "cshell-engine-spec")
	if err != nil {
		t.Fatalf("runc: %v\n%s", err, out)
	}
	var sp specs.Spec
	if err := json.Unmarshal([]byte(out), &sp); err != nil {
		t.Fatalf("config.json: %v\n%s", err, out)
	}
	r := sp.Linux.Resources
	if r == nil || r.Memory == nil || r.Memory.Limit == nil || *r.Memory.Limit != 64<<20 || r.Pids == nil || r.Pids.Limit == nil || *r.Pids.Limit != 50 {
		t.Errorf("the bundle's resources %+v, want memory 64 MiB and 50 pids", r)
	}
}
