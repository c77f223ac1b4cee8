//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// specProbe runs inside a bundle's container: what the policy must hold,
// each call made directly (ctypes), as an exploit would.
const specProbe = `import ctypes, errno, os, socket
libc = ctypes.CDLL(None, use_errno=True)
def call(f, *a):
    r = f(*a)
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
print("hostname", socket.gethostname())
print("links", sorted(os.listdir("/sys/class/net")))
print("unshare-user", call(libc.unshare, 0x10000000))
print("keyctl", call(libc.syscall, 250, 0, 0, 0, 0, 0))  # x86_64's keyctl
print("mount", call(libc.mount, b"none", b"/tmp", b"tmpfs", 0, None))
for p in ["/usr/cshell-spec-probe", "written"]:
    try:
        open(p, "w").close(); print("write", p, "ok")
    except OSError as e:
        print("write", p, errno.errorcode[e.errno])
try:
    open("secret").read(); print("secret read")
except OSError as e:
    print("secret", errno.errorcode[e.errno])
print("seccomp", [l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0])
print("vsock", call(libc.socket, 40, 1, 0))
open("plant", "w").close()
print("chmod-setuid", call(libc.chmod, b"plant", 0o4755))
print("personality", call(libc.personality, 0x400000))
`

// TestSpecBundles writes a bundle with cshell spec and runs it with
// Debian's runc and crun, unchanged, as this user (root or not), and as
// root with Debian's containerd (1.6: ctr run --config).
func TestSpecBundles(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe calls keyctl by its x86_64 number")
	}
	for _, rt := range []string{"runc", "crun", "containerd"} {
		t.Run(rt, func(t *testing.T) {
			if rt == "containerd" && os.Geteuid() != 0 {
				t.Skip("containerd runs as root here (rootless containerd needs rootlesskit): the root run tests it")
			}
			bin, err := exec.LookPath(strings.Replace(rt, "containerd", "ctr", 1))
			if err != nil {
				t.Fatalf("%s is needed (hack/test.sh installs it): %v", rt, err)
			}
			wd := t.TempDir()
			writeFile(t, filepath.Join(wd, "probe.py"), specProbe)
			writeFile(t, filepath.Join(wd, "secret"), "the secret")
			bundle := filepath.Join(t.TempDir(), "bundle")
			r := run(t, call{args: []string{"--json", "spec", "--bundle", bundle, "-w", wd, "--hide", filepath.Join(wd, "secret"), "--", "python3 probe.py"}, dir: wd})
			var ans struct{ Bundle, Config string }
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.Config != filepath.Join(bundle, "config.json") {
				t.Fatalf("spec: code %d out %q err %q", r.code, r.stdout, r.stderr)
			}
			state := t.TempDir()
			args := []string{bin, "--root", state, "run", "--bundle", bundle, "cshell-spec-" + rt}
			if rt == "containerd" {
				// ctr makes a bundle directory of its own from the config,
				// which names the rootfs by its absolute path.
				args = []string{bin, "--address", privateContainerd(t), "run", "--rm", "--runtime", "io.containerd.runc.v2",
					"--config", filepath.Join(bundle, "config.json"), "cshell-spec-" + rt}
			}
			if rt == "crun" && hybridCgroups() {
				// crun 1.8 refuses a host with cgroup v1 and controllers on
				// the cgroup2 mount (hybrid, as here): it runs where that
				// mount is gone, in a mount namespace of its own (rootless:
				// with the capabilities of that namespace dropped again).
				t.Log("crun runs with /sys/fs/cgroup/unified out of its sight: crun 1.8.1 refuses this hybrid cgroup host")
				if os.Geteuid() == 0 {
					args = append([]string{"unshare", "--mount", "--propagation", "private", "sh", "-c", `umount /sys/fs/cgroup/unified && exec "$@"`, "sh"}, args...)
				} else {
					args = append([]string{"unshare", "--user", "--mount", "--map-current-user", "--keep-caps", "--propagation", "private", "sh", "-c",
						`mount -t tmpfs -o ro,size=4k none /sys/fs/cgroup/unified && exec setpriv --inh-caps=-all --ambient-caps=-all "$@"`, "sh"}, args...)
				}
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = wd
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s run: %v\n%s", rt, err, out)
			}
			got := string(out)
			for _, want := range []string{
				"hostname cshell", "links ['lo']", "unshare-user EPERM", "keyctl EPERM", "mount EPERM",
				"write /usr/cshell-spec-probe EROFS", "write written ok", "secret EACCES", "seccomp 2",
				"vsock EAFNOSUPPORT", "chmod-setuid EPERM", "personality EPERM",
			} {
				if !strings.Contains(got, want) {
					t.Errorf("%s: the bundle's shell lacks %q:\n%s", rt, want, got)
				}
			}
			if _, err := os.Stat(filepath.Join(wd, "written")); err != nil {
				t.Errorf("the working directory was not written: %v", err)
			}
		})
	}
}

// privateContainerd starts a containerd of the test's own (its root, state
// and socket in a temporary directory; no CRI) and returns its socket; it
// is stopped when the test ends.
func privateContainerd(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Fatalf("containerd is needed (hack/test.sh installs it): %v", err)
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "sock")
	cfg := fmt.Sprintf("version = 2\nroot = %q\nstate = %q\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  address = %q\n[ttrpc]\n  address = %q\n",
		filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc")
	writeFile(t, filepath.Join(dir, "config.toml"), cfg)
	cmd := exec.Command("containerd", "--config", filepath.Join(dir, "config.toml"))
	logf, err := os.Create(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logf.Close()
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if out, err := exec.Command("ctr", "--address", sock, "version").CombinedOutput(); err == nil {
			return sock
		} else if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("containerd did not answer: %v %s\n%s", err, out, b)
		}
	}
}

func hybridCgroups() bool {
	b, err := os.ReadFile("/sys/fs/cgroup/unified/cgroup.controllers")
	return err == nil && strings.TrimSpace(string(b)) != ""
}

// TestSpecRefuses: what a bundle cannot hold is refused, not dropped.
func TestSpecRefuses(t *testing.T) {
	wd := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--expose", "5173"}, "unknown flag: --expose"},
		{[]string{"--allow-host", "example.com"}, "need cshell's supervisor"},
		{[]string{"--isolation", "process"}, "no container to describe"},
	} {
		r := run(t, call{args: append(append([]string{"spec", "--bundle", filepath.Join(t.TempDir(), "b")}, c.args...), "--", "true"), dir: wd})
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("spec %v: code %d err %q, want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	r := run(t, call{args: []string{"spec", "--bundle", filepath.Join(wd, "b"), "--", "true"}, dir: wd})
	if r.code != 2 || !strings.Contains(r.stderr, "which the shell may write") {
		t.Errorf("a bundle in the working directory: code %d err %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(wd, "b")); err == nil {
		t.Error("the refused bundle was written")
	}
	full := t.TempDir()
	writeFile(t, filepath.Join(full, "x"), "")
	if r := run(t, call{args: []string{"spec", "--bundle", full, "--", "true"}, dir: wd}); r.code != 1 || !strings.Contains(r.stderr, "not empty") {
		t.Errorf("a bundle into a full directory: code %d err %q", r.code, r.stderr)
	}
	if r := run(t, call{args: []string{"spec", "--", "true"}, dir: wd}); r.code != 2 || !strings.Contains(r.stderr, "needs --bundle") {
		t.Errorf("no --bundle: code %d err %q", r.code, r.stderr)
	}
}
