//go:build e2e

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Real engines on this machine: Debian's Docker (20.10) on a daemon of the
// test's own (its socket, data root and exec root in a temporary
// directory; no bridge, no iptables; default ulimits lowered, since root
// here cannot raise them), with an image the test imports from the
// debootstrap root hack/test.sh keeps (CSHELL_LAB_BOOKWORM). Containers
// get --network none.

// engineChecks is what the engine tests run in a container with the
// documented settings: a foreground run; a background dev server
// (--expose --ready) reached with curl from the container; and an
// allowed host through the shell's proxy, a server of the test's own on
// the container's loopback (its network namespace, --network none),
// outside the shell (NO_PROXY names loopback: --noproxy "" sends it to
// the proxy all the same).
const engineChecks = `cshell run -- sh -c 'echo inside $(id -u)' &&
	cshell run -d --expose 8000 --ready -- python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null &&
	curl -fsS -o /dev/null -w 'status %{http_code}\n' http://127.0.0.1:8000/ && cshell kill --grace 1 all >/dev/null &&
	{ python3 -m http.server 8011 --bind 127.0.0.1 >/dev/null 2>&1 & } &&
	for i in 1 2 3 4 5 6 7 8 9 10; do curl -fs -o /dev/null http://127.0.0.1:8011/ && break; sleep 0.3; done &&
	cshell run --allow-host 127.0.0.1:8011 -- 'curl -fsS -o /dev/null -w "proxied %{http_code}\n" --noproxy "" -x "$HTTP_PROXY" http://127.0.0.1:8011/'`

// privateDockerd starts dockerd and returns the docker command that
// talks to it; the daemon, its images and its folders go when the test
// ends.
func privateDockerd(t *testing.T) func(args ...string) (string, error) {
	t.Helper()
	for _, bin := range []string{"dockerd", "/usr/bin/docker"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is needed (hack/test.sh installs docker.io): %v", bin, err)
		}
	}
	dir, err := os.MkdirTemp("/var/tmp", "cshell-e2e-docker-")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "docker.sock")
	logf, err := os.Create(filepath.Join(dir, "dockerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("dockerd", "--host", "unix://"+sock, "--data-root", filepath.Join(dir, "data"),
		"--exec-root", filepath.Join(dir, "exec"), "--pidfile", filepath.Join(dir, "dockerd.pid"),
		"--bridge=none", "--iptables=false", "--ip-masq=false", "--default-ulimit", "nofile=1024:1024")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	docker := func(args ...string) (string, error) {
		c := exec.Command("/usr/bin/docker", append([]string{"-H", "unix://" + sock}, args...)...)
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		err := c.Run()
		return out.String(), err
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logf.Close()
		if err := exec.Command("rm", "-rf", "--one-file-system", dir).Run(); err != nil {
			t.Errorf("remove the daemon's folder %s: %v", dir, err)
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := docker("version", "--format", "{{.Server.Version}}")
		if err == nil {
			t.Logf("dockerd %s on %s", strings.TrimSpace(out), sock)
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			t.Fatalf("dockerd did not answer: %v %s\n%s", err, out, b)
		}
	}
	return docker
}

// labImage imports the debootstrap root into the daemon as an image.
func labImage(t *testing.T, docker func(...string) (string, error)) string {
	t.Helper()
	root := os.Getenv("CSHELL_LAB_BOOKWORM")
	if root == "" {
		t.Skip("CSHELL_LAB_BOOKWORM is not set: hack/test.sh makes a Debian 12 root for the engine tests and sets it")
	}
	image := fmt.Sprintf("cshell-e2e:%d", os.Getpid())
	tarball := filepath.Join(t.TempDir(), "root.tar")
	if out, err := exec.Command("tar", "-C", root, "-cf", tarball, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar the root: %v %s", err, out)
	}
	if out, err := docker("import", tarball, image); err != nil {
		t.Fatalf("docker import: %v %s", err, out)
	}
	return image
}

func TestRealDocker(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dockerd runs as root (rootless Docker is not Debian 12's): the root run tests it")
	}
	docker := privateDockerd(t)
	image := labImage(t, docker)
	wd := t.TempDir()
	if err := os.Chmod(wd, 0o777); err != nil {
		t.Fatal(err)
	}
	documented := []string{"--security-opt", "seccomp=unconfined", "--security-opt", "systempaths=unconfined", "--security-opt", "apparmor=unconfined"}
	runIn := func(opts []string, script string) (string, error) {
		args := append([]string{"run", "--rm", "--network", "none", "-v", cshellBin + ":/usr/local/bin/cshell:ro", "-v", wd + ":/work", "-w", "/work"}, opts...)
		return docker(append(args, image, "sh", "-c", script)...)
	}
	// The documented settings, as root and as a uid with no home.
	for _, user := range []string{"root", "1000"} {
		opts := append([]string{"--user", user}, documented...)
		out, err := runIn(opts, engineChecks)
		if err != nil || !strings.Contains(out, "inside 0\n") || !strings.Contains(out, "status 200\n") || !strings.Contains(out, "proxied 200\n") {
			t.Errorf("docker run --user %s with the documented settings: %v\n%s", user, err, out)
		}
	}
	// Each documented setting left out: doctor's cause and fix, in one
	// sentence, and no library text.
	for _, tc := range []struct {
		name string
		opts []string
		want string
	}{
		{"the default seccomp profile", []string{"--security-opt", "apparmor=unconfined"}, "a Docker container's default seccomp profile refuses new user namespaces"},
		{"masked /proc", []string{"--security-opt", "seccomp=unconfined"}, "paths inside /proc are masked"},
	} {
		out, err := runIn(tc.opts, "cshell run -- true")
		if err == nil || !strings.Contains(out, tc.want) || !strings.Contains(out, "docs/containers.md has the settings") || strings.Contains(out, "level=") {
			t.Errorf("%s: %v\n%s", tc.name, err, out)
		}
	}
	if out, err := docker("rmi", image); err != nil {
		t.Errorf("docker rmi: %v %s", err, out)
	}
}

// TestRealPodman runs cshell in Debian's Podman (4.3) as root, on storage
// of the test's own, with runc (crun refuses this hybrid cgroup host),
// cgroupfs, the debootstrap root as the container's (--rootfs), default
// ulimits lowered (root here cannot raise them) and --network none.
func TestRealPodman(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the test runs root Podman (rootless Podman needs subordinate ids the test user has not): the root run tests it")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatalf("podman is needed (hack/test.sh installs it): %v", err)
	}
	root := os.Getenv("CSHELL_LAB_BOOKWORM")
	if root == "" {
		t.Skip("CSHELL_LAB_BOOKWORM is not set: hack/test.sh makes a Debian 12 root for the engine tests and sets it")
	}
	dir, err := os.MkdirTemp("/var/tmp", "cshell-e2e-podman-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec.Command("rm", "-rf", "--one-file-system", dir).Run(); err != nil {
			t.Errorf("remove podman's folder %s: %v", dir, err)
		}
	})
	wd := t.TempDir()
	if err := os.Chmod(wd, 0o777); err != nil {
		t.Fatal(err)
	}
	runIn := func(opts []string, script string) (string, error) {
		args := []string{"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "runroot"), "--runtime", "runc",
			"--cgroup-manager", "cgroupfs", "--events-backend", "file", "run", "--rm", "--network", "none",
			"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
			"-v", cshellBin + ":/usr/local/bin/cshell:ro", "-v", wd + ":/work", "-w", "/work"}
		// :O: an overlay over the root, which stays as debootstrap left it
		args = append(append(args, opts...), "--rootfs", root+":O", "sh", "-c", script)
		out, err := exec.Command("podman", args...).CombinedOutput()
		return string(out), err
	}
	documented := []string{"--security-opt", "unmask=ALL", "--security-opt", "seccomp=unconfined"}
	for _, user := range []string{"root", "1000"} {
		out, err := runIn(append([]string{"--user", user}, documented...), engineChecks)
		if err != nil || !strings.Contains(out, "inside 0\n") || !strings.Contains(out, "status 200\n") || !strings.Contains(out, "proxied 200\n") {
			t.Errorf("podman run --user %s with the documented settings: %v\n%s", user, err, out)
		}
	}
	for _, tc := range []struct {
		name string
		opts []string
		want string
	}{
		{"the default seccomp profile", []string{"--security-opt", "unmask=ALL"}, "a Podman container's default seccomp profile lets user namespaces through but refuses sethostname"},
		{"masked /proc", []string{"--security-opt", "seccomp=unconfined"}, "paths inside /proc are masked"},
	} {
		out, err := runIn(tc.opts, "cshell run -- true")
		if err == nil || !strings.Contains(out, tc.want) || !strings.Contains(out, "docs/containers.md has the settings") || strings.Contains(out, "level=") {
			t.Errorf("%s: %v\n%s", tc.name, err, out)
		}
	}
}
