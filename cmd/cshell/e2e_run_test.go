//go:build e2e

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"
)

func TestExitCodes(t *testing.T) {
	cases := []struct {
		command string
		want    int
	}{
		{"true", 0},
		{"exit 3", 3},
		{"cshell-e2e-no-such-program", 127},
		{"./not-executable", 126},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"kill -KILL $$", 128 + int(syscall.SIGKILL)},
	}
	for _, iso := range isolations {
		for _, c := range cases {
			t.Run(iso+"/"+c.command, func(t *testing.T) {
				wd := t.TempDir()
				writeFile(t, filepath.Join(wd, "not-executable"), "echo should not run\n")
				r := sh(t, iso, wd, c.command)
				if r.code != c.want {
					t.Errorf("exit code %d, want %d (stderr %q)", r.code, c.want, r.stderr)
				}
			})
		}
	}
}

func TestStdio(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			r := sh(t, iso, t.TempDir(), "echo to-out; echo to-err >&2")
			if r.stdout != "to-out\n" || r.stderr != "to-err\n" || r.code != 0 {
				t.Errorf("got stdout %q stderr %q code %d", r.stdout, r.stderr, r.code)
			}
			in := strings.Repeat("line of input\n", 10000)
			r = run(t, call{args: []string{"run", "--isolation", iso, "--", "sha256sum"}, dir: t.TempDir(), stdin: in})
			want := run(t, call{args: []string{"run", "--isolation", "process", "--", "sha256sum"}, dir: t.TempDir(), stdin: in})
			if r.code != 0 || r.stdout != want.stdout || !strings.Contains(r.stdout, " -") {
				t.Errorf("stdin did not pass through: %q vs %q (stderr %q)", r.stdout, want.stdout, r.stderr)
			}
		})
	}
}

func TestEnvAndWorkdir(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			wd := t.TempDir()
			r := run(t, call{
				args: []string{"run", "--isolation", iso, "-e", "CSHELL_E2E_A=one two", "-e", "CSHELL_E2E_B",
					"-w", wd, "--", `echo "$CSHELL_E2E_A|$CSHELL_E2E_B|$(pwd)"`},
				dir: t.TempDir(),
				env: []string{"CSHELL_E2E_B=from-host"},
			})
			want := "one two|from-host|" + wd + "\n"
			if r.stdout != want || r.code != 0 {
				t.Errorf("got %q (stderr %q), want %q", r.stdout, r.stderr, want)
			}
		})
	}
}

func TestWorkdirWritableAndOwned(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	r := sh(t, "container", wd, "echo data > made-inside && mkdir sub && touch sub/f")
	if r.code != 0 {
		t.Fatalf("write in workdir failed: %q", r.stderr)
	}
	for _, p := range []string{"made-inside", "sub", "sub/f"} {
		st, err := os.Stat(filepath.Join(wd, p))
		if err != nil {
			t.Fatal(err)
		}
		s := st.Sys().(*syscall.Stat_t)
		if int(s.Uid) != os.Geteuid() || int(s.Gid) != os.Getegid() {
			t.Errorf("%s owned by %d:%d, want %d:%d", p, s.Uid, s.Gid, os.Geteuid(), os.Getegid())
		}
	}
}

func TestHostReadOnly(t *testing.T) {
	requireLinux(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skipf("no home directory: %v", err)
	}
	probe := filepath.Join(home, fmt.Sprintf(".cshell-e2e-probe-%d", os.Getpid()))
	t.Cleanup(func() { os.Remove(probe) })
	wd := t.TempDir()
	for _, target := range []string{probe, "/usr/cshell-e2e-probe", "/etc/cshell-e2e-probe"} {
		r := sh(t, "container", wd, "touch "+target)
		if r.code == 0 || !strings.Contains(r.stderr, "Read-only file system") {
			t.Errorf("touch %s: code %d stderr %q; want a read-only failure", target, r.code, r.stderr)
		}
		if _, err := os.Stat(target); err == nil {
			t.Errorf("%s was created on the host", target)
		}
	}
	// The home directory is visible, only not writable.
	if r := sh(t, "container", wd, "test -d "+home); r.code != 0 {
		t.Errorf("home %s not visible inside", home)
	}
}

func TestTmpPrivate(t *testing.T) {
	requireLinux(t)
	hostFile, err := os.CreateTemp("", "cshell-e2e-host-")
	if err != nil {
		t.Fatal(err)
	}
	hostFile.Close()
	t.Cleanup(func() { os.Remove(hostFile.Name()) })
	crossing := fmt.Sprintf("/tmp/cshell-e2e-crossing-%d", os.Getpid())
	t.Cleanup(func() { os.Remove(crossing) })
	wd := varTmpDir(t) // a workdir outside /tmp, so /tmp is wholly private

	r := sh(t, "container", wd, fmt.Sprintf("test ! -e %s && ls -A /tmp | wc -l && echo x > %s && test -s %s", hostFile.Name(), crossing, crossing))
	if r.code != 0 || strings.TrimSpace(r.stdout) != "0" {
		t.Fatalf("first run: /tmp not private and empty: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	if r := sh(t, "container", wd, "test ! -e "+crossing); r.code != 0 {
		t.Errorf("a file in /tmp crossed from one run to the next")
	}
	if _, err := os.Stat(crossing); err == nil {
		t.Errorf("a file written to /tmp inside appeared on the host")
	}
	// Control: the process runner shares the host's /tmp.
	if r := sh(t, "process", wd, "test -e "+hostFile.Name()); r.code != 0 {
		t.Errorf("control failed: the process runner does not see %s", hostFile.Name())
	}
}

func TestSecretsHidden(t *testing.T) {
	requireLinux(t)
	home := varTmpDir(t)
	writeFile(t, filepath.Join(home, ".ssh", "id_test"), "PRIVATE KEY\n")
	writeFile(t, filepath.Join(home, ".aws", "credentials"), "secret\n")
	writeFile(t, filepath.Join(home, ".netrc"), "machine x password y\n")
	writeFile(t, filepath.Join(home, "visible.txt"), "fine\n")
	wd := t.TempDir()
	env := []string{"HOME=" + home}
	call := func(command string) result {
		return run(t, call{args: []string{"run", "--", command}, dir: wd, env: env})
	}
	if r := call("cat ~/visible.txt"); r.stdout != "fine\n" {
		t.Fatalf("control: ~/visible.txt not readable: %q %q", r.stdout, r.stderr)
	}
	for _, p := range []string{"~/.ssh/id_test", "~/.aws/credentials", "~/.netrc"} {
		r := call("cat " + p)
		if r.code == 0 || strings.Contains(r.stdout, "PRIVATE") || strings.Contains(r.stdout, "secret") || strings.Contains(r.stdout, "password") {
			t.Errorf("%s readable inside: code %d out %q", p, r.code, r.stdout)
		}
	}
}

func TestRWROHide(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	extra := varTmpDir(t)
	writeFile(t, filepath.Join(wd, "ro", "f"), "ro\n")
	writeFile(t, filepath.Join(wd, "secret.txt"), "hidden\n")
	writeFile(t, filepath.Join(wd, "hidden-dir", "f"), "hidden\n")
	writeFile(t, filepath.Join(wd, "plain.txt"), "plain\n")

	if r := sh(t, "container", wd, "touch "+extra+"/x"); r.code == 0 {
		t.Fatalf("control: %s writable without --rw", extra)
	}
	if r := sh(t, "container", wd, "touch "+extra+"/x", "--rw", extra); r.code != 0 {
		t.Errorf("--rw %s: not writable: %q", extra, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(extra, "x")); err != nil {
		t.Errorf("file written through --rw not on the host: %v", err)
	}
	r := sh(t, "container", wd, "cat ro/f && touch ok-here && ! touch ro/g", "--ro", "ro")
	if r.code != 0 || r.stdout != "ro\n" {
		t.Errorf("--ro ro: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	r = sh(t, "container", wd, "cat plain.txt; cat secret.txt; ls hidden-dir; cat hidden-dir/f", "--hide", "secret.txt", "--hide", wd+"/hidden-dir")
	if r.stdout != "plain\n" {
		t.Errorf("--hide: got %q (stderr %q); want only plain.txt readable", r.stdout, r.stderr)
	}
}

func TestHostProcessesInvisible(t *testing.T) {
	requireLinux(t)
	r := sh(t, "container", t.TempDir(), `ls /proc | grep -c '^[0-9]*$'; tr '\0' ' ' < /proc/1/cmdline`)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 {
		t.Fatalf("code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	n, _ := strconv.Atoi(lines[0])
	if n < 1 || n > 6 {
		t.Errorf("%d processes visible inside; want only the shell's own", n)
	}
	if !strings.Contains(lines[1], "__pid1") {
		t.Errorf("PID 1 inside is %q, want cshell's init", lines[1])
	}
}

func TestLoopbackIsolated(t *testing.T) {
	requireLinux(t)
	port := greeter(t, "127.0.0.1:0", "host-server\n")
	probe := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port)
	if r := sh(t, "process", t.TempDir(), probe); r.stdout != "host-server\n" {
		t.Fatalf("control: the host server is not reachable without a sandbox: %q %q", r.stdout, r.stderr)
	}
	if r := sh(t, "container", t.TempDir(), probe); r.code == 0 || strings.Contains(r.stdout, "host-server") {
		t.Errorf("the host's 127.0.0.1:%d is reachable from inside: %q", port, r.stdout)
	}
	// The shell's own loopback works.
	r := sh(t, "container", t.TempDir(), `python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 80)); s.listen()
c = socket.create_connection(("127.0.0.1", 80)); print("own-loopback-ok")'`)
	if r.stdout != "own-loopback-ok\n" {
		t.Errorf("the shell's own loopback does not work: %q %q", r.stdout, r.stderr)
	}
}

func TestNoCapabilities(t *testing.T) {
	requireLinux(t)
	r := sh(t, "container", t.TempDir(), `grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status; mount -t tmpfs none /mnt 2>/dev/null && echo MOUNTED; echo x 2>/dev/null > /proc/sys/kernel/hostname && echo WROTE; hostname`)
	want := "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\ncshell\n"
	if r.stdout != want {
		t.Errorf("got %q, want %q", r.stdout, want)
	}
}

func TestUsageErrors(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "bad.json")
	writeFile(t, cfg, "{\n  // comment\n  \"shells\": {\"maxConcurrent\": \"four\"}\n}\n")
	cases := []struct {
		name string
		args []string
		want string // in the sentence
	}{
		{"unknown flag", []string{"run", "--bogus", "--", "true"}, "unknown flag: --bogus"},
		{"bad isolation", []string{"run", "--isolation", "bogus", "--", "true"}, `unknown isolation "bogus"`},
		{"no command", []string{"run"}, "needs a command"},
		{"bad env", []string{"run", "-e", "=x", "--", "true"}, "KEY=VALUE"},
		{"missing rw", []string{"run", "--rw", "/nonexistent/cshell-e2e", "--", "true"}, "does not exist"},
		{"missing workdir", []string{"run", "-w", "/nonexistent/cshell-e2e", "--", "true"}, "does not exist"},
		{"bad timeout", []string{"run", "--timeout", "soon", "--", "true"}, "--timeout"},
		{"bad config", []string{"--config", cfg, "run", "--", "true"}, "line 3, column"},
		{"unknown command", []string{"frobnicate"}, "unknown command"},
		{"unknown global flag", []string{"--bogus"}, "unknown flag: --bogus; see cshell --help"},
		{"timeout NaN", []string{"run", "--timeout", "NaN", "--", "true"}, "--timeout"},
		{"timeout too long", []string{"run", "--timeout", "1e30", "--", "true"}, "too long"},
		{"grace infinite", []string{"kill", "1", "--grace", "Inf"}, "--grace"},
		{"grace word", []string{"kill", "1", "--grace", "soon"}, `"--grace" flag: not a number; see cshell kill --help`},
		{"wait NaN", []string{"output", "1", "--wait", "NaN"}, "--wait"},
		{"two shells", []string{"output", "1", "2"}, "cshell output takes one shell, not 2"},
		{"allow a URL", []string{"run", "--allow-host", "http://example.com", "--", "true"}, "give the host alone, such as example.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, call{args: c.args, dir: t.TempDir()})
			if r.code != 2 {
				t.Errorf("exit code %d, want 2", r.code)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "cshell: ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("stderr %q: want one line starting cshell: and saying %q", r.stderr, c.want)
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace on stderr: %q", r.stderr)
			}
		})
	}
}

func TestProjectConfigTurnsShellsOff(t *testing.T) {
	wd := t.TempDir()
	writeFile(t, filepath.Join(wd, ".cshell.json"), `{"shells": {"enabled": false}}`)
	r := sh(t, "container", wd, "echo ran")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "turned off") {
		t.Errorf("code %d out %q err %q; want a refusal", r.code, r.stdout, r.stderr)
	}
}

func TestSignalsReachTheGroup(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			marker := fmt.Sprintf("%d", 470000+os.Getpid()%10000)
			s := start(t, call{
				args: []string{"run", "--isolation", iso, "--", fmt.Sprintf(
					`trap 'echo got-TERM; exit 7' TERM; sleep %s & sleep %s.5 & echo ready; wait`, marker, marker)},
				dir: t.TempDir(),
			})
			s.out.waitFor(t, "ready", 10*time.Second)
			waitCount(t, "sleep "+marker, 2, 5*time.Second) // "ready" may come before both exec
			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			code := s.wait(t, 10*time.Second)
			if code != 7 || !strings.Contains(s.out.text(), "got-TERM") {
				t.Errorf("code %d output %q; want the trap's exit 7", code, s.out.text())
			}
			waitGone(t, "sleep "+marker, 5*time.Second)
		})
	}
}

func TestContainerDiesWithCshell(t *testing.T) {
	requireLinux(t)
	marker := fmt.Sprintf("%d", 480000+os.Getpid()%10000)
	s := start(t, call{args: []string{"run", "--", "sleep " + marker + " & echo ready; sleep " + marker + ".5"}, dir: t.TempDir()})
	s.out.waitFor(t, "ready", 10*time.Second)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.wait(t, 5*time.Second)
	waitGone(t, "sleep "+marker, 5*time.Second)
}

func TestTimeout(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			t0 := time.Now()
			r := sh(t, iso, t.TempDir(), "sleep 30", "--timeout", "1")
			if el := time.Since(t0); el > 8*time.Second {
				t.Errorf("took %s", el)
			}
			if r.code != 128+int(syscall.SIGTERM) || !strings.Contains(r.stderr, "timed out after 1s") {
				t.Errorf("code %d stderr %q", r.code, r.stderr)
			}
		})
	}
}

func TestTerminal(t *testing.T) {
	requireLinux(t)
	master, slave, err := console.NewPty()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	f, err := os.OpenFile(slave, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(cshellBin, "run", "--", "bash --norc -i")
	cmd.Dir = t.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := newLineReader(master)
	if _, err := master.Write([]byte("tty; echo answer=$((6*7)); exit 5\n")); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, "answer=42", 10*time.Second)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("interactive shell did not exit; output %q", out.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != 5 {
		t.Errorf("exit code %d, want 5", code)
	}
	if text := out.text(); !strings.Contains(text, "/dev/pts/") {
		t.Errorf("the shell has no terminal of its own: %q", text)
	}
}

func TestDoctorAndVersion(t *testing.T) {
	r := run(t, call{args: []string{"doctor"}})
	if r.code != 0 || !strings.Contains(r.stdout, "isolation auto: container") || !strings.Contains(r.stdout, "ok   user namespaces") {
		t.Errorf("doctor: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	r = run(t, call{args: []string{"version", "--json"}})
	if r.code != 0 || !strings.Contains(r.stdout, `"libcontainer":"v1.5`) {
		t.Errorf("version: code %d out %q", r.code, r.stdout)
	}
}

func TestTmpdirIsPrivateTmp(t *testing.T) {
	requireLinux(t)
	// The host's TMPDIR is read-only inside; the shell gets its own /tmp.
	r := run(t, call{args: []string{"run", "--", `echo "$TMPDIR"; mktemp >/dev/null && echo writable`}, dir: t.TempDir(), env: []string{"TMPDIR=/var/tmp"}})
	if r.stdout != "/tmp\nwritable\n" {
		t.Errorf("got %q (stderr %q)", r.stdout, r.stderr)
	}
	r = run(t, call{args: []string{"run", "-e", "TMPDIR=/somewhere", "--", `echo "$TMPDIR"`}, dir: t.TempDir()})
	if r.stdout != "/somewhere\n" {
		t.Errorf("-e TMPDIR was overridden: %q", r.stdout)
	}
}

// TestPid1NotTraceable checks that the command cannot get hold of PID 1
// (cshell's init, which carries the parent-death signal and, with exposes,
// the supervisor's socket factory on fd 3): no ptrace, no pidfd_getfd, no
// environ.
func TestPid1NotTraceable(t *testing.T) {
	requireLinux(t)
	if runtime.GOARCH != "amd64" {
		t.Skipf("the probe calls x86-64 system call numbers; this is %s", runtime.GOARCH)
	}
	probe := `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def tell(what, r):
    print(what, "refused" if r < 0 else "ALLOWED")
tell("pidfd_getfd", libc.syscall(438, os.pidfd_open(1), 3, 0))
tell("ptrace", libc.syscall(101, 16, 1, 0, 0))
try:
    open("/proc/1/environ").read(); print("environ ALLOWED")
except OSError:
    print("environ refused")
'`
	wd := t.TempDir()
	r := run(t, call{args: []string{"--state-dir", t.TempDir(), "run", "--expose", fmt.Sprint(freePort(t)), "--", probe}, dir: wd})
	if r.code != 0 || r.stdout != "pidfd_getfd refused\nptrace refused\nenviron refused\n" {
		t.Errorf("code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

// TestStandInsStay: a hidden path's stand-in cannot be taken away, as an
// exploit would try it, with the calls made directly: umount2 on it, and,
// in a shell allowed user namespaces of its own, umount2 from a new user
// and mount namespace (where the copied stand-in is locked), chmod of the
// stand-in, and a bind of the hidden directory elsewhere. The secret stays
// unreadable after each (the stand-in is what moves: empty). Both in the
// read-only home and in the writable working directory (--hide), where
// the stand-in must be read-only itself.
func TestStandInsStay(t *testing.T) {
	requireLinux(t)
	home := varTmpDir(t)
	writeFile(t, filepath.Join(home, ".ssh", "id_test"), "PRIVATE KEY\n")
	wd := t.TempDir()
	writeFile(t, filepath.Join(wd, "private", "id_test"), "PRIVATE KEY\n")
	probe := `python3 -c '
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
target = os.path.expanduser(os.environ["TARGET"])
def call(name, r):
    e = ctypes.get_errno() if r != 0 else 0
    print(name + ":", errno.errorcode.get(e, "ok") if e else "ok")
def read():
    try:
        print("read:", open(target + "/id_test").read().strip())
    except OSError as x:
        print("read:", errno.errorcode[x.errno])
call("umount", libc.umount2(target.encode(), 2))  # MNT_DETACH
read()
call("chmod", libc.chmod(target.encode(), 0o755))
read()
if os.environ.get("NESTED"):
    uid, gid = os.getuid(), os.getgid()
    call("unshare", libc.unshare(0x10000000 | 0x00020000))  # CLONE_NEWUSER | CLONE_NEWNS
    open("/proc/self/setgroups", "w").write("deny")
    open("/proc/self/uid_map", "w").write("0 %d 1" % uid)
    open("/proc/self/gid_map", "w").write("0 %d 1" % gid)
    call("nested umount", libc.umount2(target.encode(), 2))
    read()
    os.makedirs("/tmp/elsewhere", exist_ok=True)
    call("nested bind", libc.mount(target.encode(), b"/tmp/elsewhere", None, 0x1000 | 0x4000, None))  # MS_BIND | MS_REC
    try:
        print("bound:", open("/tmp/elsewhere/id_test").read().strip())
    except OSError as x:
        print("bound:", errno.errorcode[x.errno])
'`
	for _, target := range []string{"~/.ssh", filepath.Join(wd, "private")} {
		for _, nested := range []bool{false, true} {
			args := []string{"run", "--hide", filepath.Join(wd, "private"), "-e", "TARGET=" + target}
			env := []string{"HOME=" + home, "TARGET=" + target}
			if nested {
				args = append(args, "--allow-userns", "-e", "NESTED=1")
				env = append(env, "NESTED=1")
			}
			r := run(t, call{args: append(args, "--", probe), dir: wd, env: env})
			if strings.Contains(r.stdout, "PRIVATE") || strings.Contains(r.stdout, "umount: ok") || strings.Contains(r.stdout, "chmod: ok") ||
				strings.Count(r.stdout, "read: EACCES") < 2 {
				t.Errorf("%s, nested=%v: the stand-in gave way:\nstdout %s\nstderr %s", target, nested, r.stdout, r.stderr)
			}
			// Root of its own namespace, the shell may enter the stand-in
			// (it owns it): empty, ENOENT.
			if nested && (!strings.Contains(r.stdout, "unshare: ok") || strings.Contains(r.stdout, "nested umount: ok") || !strings.Contains(r.stdout, "bound: ")) {
				t.Errorf("%s: in a user namespace of the shell's own the stand-in gave way, or none was made:\nstdout %s\nstderr %s", target, r.stdout, r.stderr)
			}
		}
	}
}

// --rw of a whole top-level directory of the host makes that directory
// writable inside: its bind is not mistaken for the read-only bind of
// the same top-level directory that the container's init makes itself.
// As root the test writes there (in a top-level directory of its own);
// rootless, where the host's permissions refuse the write anyway, the
// mount is what it reads.
func TestRWTopLevelDirectory(t *testing.T) {
	requireLinux(t)
	dir := "/opt"
	if os.Geteuid() == 0 {
		d, err := os.MkdirTemp("/", "cshell-e2e-rw-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		writeFile(t, filepath.Join(d, "f"), "not empty\n") // an empty one gets no bind of its own
		dir = d
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("no %s on this machine to bind: %v", dir, err)
	}
	// The options of the topmost mount on dir, and what a write there
	// meets: EROFS (read-only), EACCES (the host's permissions) or none.
	probe := fmt.Sprintf(`awk '$5 == %q {o = $6} END {print o}' /proc/self/mountinfo; touch %s/cshell-e2e-x 2>&1 | grep -o -e 'Read-only' -e 'Permission denied' || echo written`, dir, dir)
	r := sh(t, "container", t.TempDir(), probe)
	if !strings.HasPrefix(r.stdout, "ro,") || !strings.Contains(r.stdout, "Read-only") {
		t.Fatalf("control: %s without --rw: %q %q; want a read-only mount", dir, r.stdout, r.stderr)
	}
	r = sh(t, "container", t.TempDir(), probe, "--rw", dir)
	if !strings.HasPrefix(r.stdout, "rw,") || strings.Contains(r.stdout, "Read-only") {
		t.Errorf("--rw %s: %q %q; want a writable mount", dir, r.stdout, r.stderr)
	}
	if os.Geteuid() == 0 {
		if _, err := os.Stat(filepath.Join(dir, "cshell-e2e-x")); err != nil || !strings.Contains(r.stdout, "written") {
			t.Errorf("--rw %s: the file written inside is not on the host: %v (%q)", dir, err, r.stdout)
		}
	}
}
