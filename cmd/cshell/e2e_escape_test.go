//go:build e2e

package main

// Escapes through cshell's own files: each attack is made from inside a
// shell, as a hostile command would make it, or (for the checks of records)
// by planting the files such a command could have planted; then the host is
// checked. Victims are files, directories and processes the test made.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"
	"golang.org/x/sys/unix"
)

// pyRename is a python program that tries each rename given as arguments
// (old new old new ...) with rename(2) itself and prints what happened.
const pyRename = `python3 -c '
import os, sys
a = sys.argv[1:]
for old, new in zip(a[0::2], a[1::2]):
    try:
        os.rename(old, new)
        print("MOVED", old)
    except OSError as e:
        print("refused", old, e.strerror)
' `

func TestStateDirCannotBeMoved(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	// The default layout: the state dir below the working directory (an MCP
	// host that starts cshell serve in $HOME, with ~/.local/state/cshell).
	env := []string{"XDG_STATE_HOME=" + filepath.Join(wd, ".local", "state"), "CSHELL_STATE_DIR="}
	state := filepath.Join(wd, ".local", "state", "cshell")
	cs := func(args ...string) result { return run(t, call{args: args, dir: wd, env: env}) }
	r := cs("--json", "run", "-d", "--", "sleep 60")
	var ans struct{ ID string }
	if json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.ID == "" {
		t.Fatalf("run -d: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { cs("kill", ans.ID, "--grace", "0") })

	moves := pyRename + ".local/state .local/x .local .l2 .local/state/cshell .local/state/c2"
	for _, extra := range [][]string{nil, {"--state-dir", t.TempDir()}} {
		// Also a shell run with another state dir must not move the default one.
		r = cs(append(append([]string{}, extra...), "run", "--", moves)...)
		if strings.Contains(r.stdout, "MOVED") || strings.Count(r.stdout, "refused") != 3 {
			t.Errorf("state dir's parents moved from inside a shell (%v): code %d out %q err %q", extra, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(state, "shells", ans.ID, "meta.json")); err != nil {
		t.Fatalf("the state dir is not where it was: %v", err)
	}
	r = cs("ps")
	if !strings.Contains(r.stdout, "running for") {
		t.Errorf("ps after the attack: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	if r = cs("kill", ans.ID, "--grace", "0"); r.code != 0 || !strings.HasPrefix(r.stdout, "killed "+ans.ID) {
		t.Errorf("kill after the attack: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestSwappedStateDirRefused(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	id := e.start("sleep 60")
	// The swap a shell made: the real state dir renamed away, a forged
	// one in its place.
	real := e.state + ".real"
	if err := os.Rename(e.state, real); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // back, so that newBG's clean-up stops the shell
		os.RemoveAll(e.state)
		os.Rename(real, e.state)
	})
	victim := varTmpDir(t)
	writeFile(t, filepath.Join(e.state, "shells", "1", "meta.json"),
		fmt.Sprintf(`{"id":"../../../../../../../..%s","status":"exited","exit_code":0}`, victim))
	if err := os.Chmod(e.state, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ps"}, {"clean"}, {"kill", id}, {"output", id}, {"run", "-d", "--", "true"}} {
		r := e.cs(args...)
		if r.code != 1 || !strings.Contains(r.stderr, "replaced") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v in a swapped state dir: code %d out %q err %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the victim directory is gone: %v", err)
	}
}

// plantRecord writes a forged shell record into a state dir.
func plantRecord(t *testing.T, state, folder string, meta map[string]any) {
	t.Helper()
	b, _ := json.Marshal(meta)
	writeFile(t, filepath.Join(state, "shells", folder, "meta.json"), string(b))
}

// startVictim starts a process of the test's own that nothing may kill.
func startVictim(t *testing.T) *exec.Cmd {
	t.Helper()
	v := exec.Command("sleep", "600")
	v.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Process.Kill(); v.Wait() })
	return v
}

func startTime(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] != 'Z'
}

func TestForgedRecordsIgnored(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	e.cs("ps") // makes the state dir, as cshell made it
	victimDir := varTmpDir(t)
	writeFile(t, filepath.Join(victimDir, "keep"), "keep\n")
	victim := startVictim(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}

	// clean: an id that is a path.
	plantRecord(t, e.state, "700", map[string]any{"id": "../../../../../../../.." + victimDir, "status": "exited", "exit_code": 0})
	// ps: a record that looks lost, naming the victim process (never pid 1
	// here: on today's code that was kill(-1, SIGKILL)).
	plantRecord(t, e.state, "701", map[string]any{"id": "701", "status": "running", "supervisor_pid": dead.Process.Pid,
		"supervisor_start_time": 1, "pid": victim.Process.Pid, "pid_start_time": startTime(t, victim.Process.Pid)})
	// the relay: a running record exposing a host server nothing exposed.
	hostPort := greeter(t, "127.0.0.1:0", "HOST-SECRET\n")
	plantRecord(t, e.state, "703", map[string]any{"id": "703", "status": "running", "session": "default",
		"supervisor_pid": victim.Process.Pid, "supervisor_start_time": startTime(t, victim.Process.Pid),
		"exposed": []map[string]any{{"listen": fmt.Sprintf("127.0.0.1:%d", hostPort), "port": hostPort}}})
	writeFile(t, filepath.Join(e.state, "exposing", "703"), "")
	// the next expose and the notice writer: symlinks to victim files.
	victimFile := filepath.Join(victimDir, "file")
	writeFile(t, victimFile, "victim\n")
	writeFile(t, filepath.Join(e.state, "next-id"), "800\n")
	if err := os.Symlink(victimFile, filepath.Join(e.state, "exposing", "800")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victimFile, filepath.Join(e.state, "notices.jsonl")); err != nil {
		t.Fatal(err)
	}

	e.cs("ps", "--all")
	e.cs("clean")
	if !alive(victim.Process.Pid) {
		t.Errorf("ps killed the victim process a forged record named")
	}
	if _, err := os.Stat(filepath.Join(victimDir, "keep")); err != nil {
		t.Errorf("clean removed the victim directory a forged id named: %v", err)
	}
	probe := fmt.Sprintf(`python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", %d), timeout=3)
print(s.recv(100).decode())
' 2>&1 | tail -1`, hostPort)
	if r := e.cs("run", "--", probe); strings.Contains(r.stdout, "HOST-SECRET") {
		t.Errorf("a foreground shell reached a host server through a forged record: %q", r.stdout)
	}
	id := e.start("sleep 0.3; echo ended", "--expose", strconv.Itoa(freePort(t)))
	e.waitEnd(id)
	time.Sleep(200 * time.Millisecond)
	if b, _ := os.ReadFile(victimFile); string(b) != "victim\n" {
		t.Errorf("a planted symlink led a write to the victim file: %q", b)
	}
}

func TestWorkdirThroughPlantedSymlink(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	victim := varTmpDir(t)
	if err := os.Mkdir(filepath.Join(wd, "packages"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An earlier shell plants the link (an npm install at the root, say).
	if r := sh(t, "container", wd, "ln -s "+victim+" packages/app"); r.code != 0 {
		t.Fatalf("plant: code %d err %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"run", "-w", "./packages/app", "--", "touch pwned-w"},
		{"run", "--rw", "packages/app", "--", "touch packages/app/pwned-rw"},
		{"run", "--ro", "packages/app", "--", "true"},
	} {
		r := run(t, call{args: args, dir: wd})
		if r.code != 1 || !strings.Contains(r.stderr, "packages/app") || !strings.Contains(r.stderr, "symbolic link") {
			t.Errorf("%v through a planted link: code %d err %q", args, r.code, r.stderr)
		}
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 0 {
		t.Errorf("the link's target was written: %v", entries)
	}
}

// runtimeDirOf is where cshell keeps its runtime dir for this test's user.
func runtimeDirOf() string {
	if os.Geteuid() == 0 {
		return "/run/cshell"
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
		return filepath.Join(x, "cshell")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("cshell-%d", os.Geteuid()))
}

func TestRuntimeDirOutOfReach(t *testing.T) {
	requireLinux(t)
	rt := runtimeDirOf()
	victim := filepath.Join(t.TempDir(), "victim")
	writeFile(t, victim, "victim\n")
	for _, rw := range []string{"/tmp", "/run"} {
		attack := fmt.Sprintf(`ls %[1]s 2>&1 | head -1; python3 -c '
import os, sys
rt, victim = sys.argv[1], sys.argv[2]
for what, f in [("rename", lambda: os.rename(rt, rt + ".x")),
                ("replace", lambda: (os.rename(rt + "/hidden/dir", rt + "/old"), os.symlink(victim, rt + "/hidden/dir")))]:
    try:
        f(); print("DONE", what)
    except OSError as e:
        print("refused", what, e.strerror)
' %[1]s %[2]s`, rt, victim)
		r := sh(t, "container", t.TempDir(), attack, "--rw", rw)
		if strings.Contains(r.stdout, "DONE") || strings.Contains(r.stdout, "rootfs") {
			t.Errorf("--rw %s reached the runtime dir %s: code %d out %q err %q", rw, rt, r.code, r.stdout, r.stderr)
		}
	}
	sh(t, "container", t.TempDir(), "true", "--hide", victim)
	if st, err := os.Stat(victim); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("victim file after a start: %v %v", st.Mode(), err)
	}
}

func TestHostileProjectConfig(t *testing.T) {
	requireLinux(t)
	for _, c := range []struct{ name, plant string }{
		{"fifo", "mkfifo .cshell.json"},
		{"sparse 3 GB", "truncate -s 3G .cshell.json"},
		{"/dev/zero", "ln -s /dev/zero .cshell.json"},
		{"huge", "head -c 2000000 /dev/zero | tr '\\0' ' ' > .cshell.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wd := t.TempDir()
			if r := sh(t, "container", wd, c.plant); r.code != 0 {
				t.Fatalf("plant: code %d err %q", r.code, r.stderr)
			}
			cmd := exec.Command(cshellBin, "run", "--", "echo RAN")
			cmd.Dir = wd
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("cshell run hung on a %s .cshell.json", c.name)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss // KiB
			code := cmd.ProcessState.ExitCode()
			msg := strings.TrimSpace(errb.String())
			if code != 1 || strings.Contains(out.String(), "RAN") || !strings.Contains(msg, ".cshell.json") || strings.Contains(msg, "\n") {
				t.Errorf("code %d out %q err %q", code, out.String(), msg)
			}
			if rss > 200<<10 {
				t.Errorf("cshell grew to %d MiB reading it", rss>>10)
			}
		})
	}
}

func TestNoticeBounded(t *testing.T) {
	e := newBG(t)
	id := e.start(`sleep 0.3; head -c 20000000 /dev/zero | tr '\0' x; printf '\n%s\n' "$(printf 'y%.0s' $(seq 1 5000))"`)
	e.waitEnd(id)
	b, err := os.ReadFile(filepath.Join(e.state, "notices.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 64<<10 {
		t.Fatalf("the notice is %d bytes", len(b))
	}
	var n struct {
		ID        string   `json:"id"`
		LastLines []string `json:"last_lines"`
	}
	if err := json.Unmarshal(b, &n); err != nil || n.ID != id || len(n.LastLines) == 0 || len(n.LastLines) > 10 {
		t.Fatalf("notice %q: %v", b[:min(len(b), 300)], err)
	}
	for _, l := range n.LastLines {
		if len(l) > 1024 {
			t.Errorf("a line of %d bytes in the notice", len(l))
		}
	}
	if r := e.cs("logs", id, "-n", "1"); r.code != 0 || len(r.stdout) != 5001 {
		t.Errorf("logs -n 1: code %d, %d bytes", r.code, len(r.stdout))
	}
}

func TestEnvAllowlist(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			wd := t.TempDir()
			cfg := filepath.Join(t.TempDir(), "config.json")
			writeFile(t, cfg, `{"env": {"pass": ["FROM_CONFIG"]}}`)
			writeFile(t, filepath.Join(wd, ".cshell.json"), `{"env": {"pass": ["FROM_CONFIG", "GITHUB_TOKEN"]}}`)
			env := []string{"GITHUB_TOKEN=gh-secret", "AWS_SECRET_ACCESS_KEY=aws-secret", "NPM_TOKEN=npm-secret",
				"SSH_AUTH_SOCK=/tmp/agent.sock", "MY_VAR=mine", "FROM_CONFIG=cfg", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "CSHELL_SESSION=e2e-leak"}
			r := run(t, call{args: []string{"--config", cfg, "run", "--isolation", iso, "-e", "MY_VAR", "-e", "SET=1", "--", "env"}, dir: wd, env: env})
			if r.code != 0 {
				t.Fatalf("code %d err %q", r.code, r.stderr)
			}
			for _, secret := range []string{"gh-secret", "aws-secret", "npm-secret", "SSH_AUTH_SOCK", "CSHELL_SESSION"} {
				if strings.Contains(r.stdout, secret) {
					t.Errorf("%s reached the shell: %q", secret, r.stdout)
				}
			}
			for _, want := range []string{"PATH=", "HOME=", "LANG=C.UTF-8", "LC_ALL=C", "TZ=UTC", "MY_VAR=mine", "SET=1", "FROM_CONFIG=cfg"} {
				if !strings.Contains(r.stdout, "\n"+want) && !strings.HasPrefix(r.stdout, want) {
					t.Errorf("%s missing from the shell's environment: %q", want, r.stdout)
				}
			}
			if !strings.Contains(r.stderr, "env.pass") {
				t.Errorf("the project's loosening env.pass was not named: %q", r.stderr)
			}
		})
	}
	e := newBG(t)
	id := e.start("sleep 30", "-e", "TOKEN=value-not-shown")
	if r := e.cs("ps", "--json"); strings.Contains(r.stdout, "value-not-shown") {
		t.Errorf("ps --json shows an environment value: %q", r.stdout)
	}
	e.cs("kill", id, "--grace", "0")
}

// secretStores are token files hidden by default, made after the start.
var secretStores = []string{".aws/credentials", ".vault-token", ".pgpass", ".config/gh/hosts.yml", ".cargo/credentials.toml", ".ssh/id_new"}

func TestSecretMadeAfterStart(t *testing.T) {
	requireLinux(t)
	// The stores' parents exist (a missing one is made only where its
	// parent is: cargo and gh were used before, say).
	home := varTmpDir(t)
	for _, d := range []string{".cargo", ".config/gh"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := newBG(t)
	var reads []string
	for _, s := range secretStores {
		reads = append(reads, "cat ~/"+s+" 2>/dev/null")
	}
	r := run(t, call{args: []string{"--state-dir", e.state, "--json", "run", "-d", "--", "sleep 1; " + strings.Join(reads, "; ") + "; echo done"}, dir: e.wd, env: []string{"HOME=" + home}})
	var ans struct{ ID string }
	if json.Unmarshal([]byte(r.stdout), &ans) != nil || ans.ID == "" {
		t.Fatalf("run -d: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	for _, s := range secretStores {
		writeFile(t, filepath.Join(home, s), "SECRET-"+s+"\n")
	}
	e.waitEnd(ans.ID)
	out := e.output(ans.ID)["output"].(string)
	if strings.Contains(out, "SECRET-") || !strings.Contains(out, "done") {
		t.Errorf("a secret made after the start was readable: %q", out)
	}
}

func TestRealHomeHiddenWhenHOMEElsewhere(t *testing.T) {
	requireLinux(t)
	u := os.Getenv("USER")
	real := "/root"
	if os.Geteuid() != 0 {
		real = "/home/" + u
		if b, err := exec.Command("getent", "passwd", strconv.Itoa(os.Geteuid())).Output(); err == nil {
			if f := strings.Split(strings.TrimSpace(string(b)), ":"); len(f) >= 6 {
				real = f[5]
			}
		}
	}
	ssh := filepath.Join(real, ".ssh")
	if _, err := os.Stat(ssh); os.IsNotExist(err) {
		if err := os.Mkdir(ssh, 0o700); err != nil {
			t.Skipf("cannot make %s to plant a marker in: %v", ssh, err)
		}
		t.Cleanup(func() { os.RemoveAll(ssh) })
	}
	marker := filepath.Join(ssh, fmt.Sprintf("cshell-e2e-marker-%d", os.Getpid()))
	writeFile(t, marker, "REAL-HOME-SECRET\n")
	t.Cleanup(func() { os.Remove(marker) })
	for _, env := range [][]string{{"HOME=" + t.TempDir()}, {"HOME="}} {
		r := run(t, call{args: []string{"run", "--", "cat " + marker + " 2>&1"}, dir: t.TempDir(), env: env})
		if strings.Contains(r.stdout, "REAL-HOME-SECRET") {
			t.Errorf("with %v the real home's ~/.ssh was readable: %q", env, r.stdout)
		}
	}
}

func TestSilentControlClient(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	silent := func(id string) net.Conn {
		c, err := net.Dial("unix", filepath.Join(e.state, "shells", id, "control.sock"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	id := e.start("sleep 60", "--timeout", "2")
	silent(id)
	t0 := time.Now()
	e.waitEnd(id)
	if m := e.meta(id); m["status"] != "timed_out" || time.Since(t0) > 8*time.Second {
		t.Errorf("with a silent control client: status %v after %v", m["status"], time.Since(t0))
	}
	id = e.start("sleep 60")
	silent(id)
	t0 = time.Now()
	if r := e.cs("kill", id, "--grace", "1"); r.code != 0 || time.Since(t0) > 8*time.Second {
		t.Errorf("kill with a silent control client: code %d after %v err %q", r.code, time.Since(t0), r.stderr)
	}
}

func TestTerminalOnStdinOnly(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			master, slave, err := console.NewPty()
			if err != nil {
				t.Skipf("no pty here: %v", err)
			}
			defer master.Close()
			tty, err := os.OpenFile(slave, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer tty.Close()
			before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			out, err := os.Create(filepath.Join(t.TempDir(), "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			probe := `python3 -c '
import os, termios
for fd in (0, 2):
    try:
        a = termios.tcgetattr(fd); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a)
        print("CHANGED", fd)
    except termios.error:
        print("not a terminal", fd)
'`
			cmd := exec.Command(cshellBin, "run", "--isolation", iso, "--", probe)
			cmd.Dir = t.TempDir()
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, out, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			go func() { // drain what reaches the terminal
				b := make([]byte, 4096)
				for {
					if _, err := master.Read(b); err != nil {
						return
					}
				}
			}()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				// A command that changes the terminal from outside its
				// foreground group is stopped by SIGTTOU.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				t.Fatalf("cshell did not end (stopped on the caller's terminal?)")
			}
			b, _ := os.ReadFile(out.Name())
			after, _ := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if strings.Contains(string(b), "CHANGED") || after.Lflag != before.Lflag {
				t.Errorf("the command changed the caller's terminal: %q (lflag %#x -> %#x)", b, before.Lflag, after.Lflag)
			}
		})
	}
}

func TestControlCharactersRefused(t *testing.T) {
	e := newBG(t)
	for _, args := range [][]string{
		{"run", "-d", "--name", "web\x1b[2J", "--", "true"},
		{"run", "-d", "--name", "a\nb", "--", "true"},
		{"run", "-d", "--session", "../x", "--", "true"},
		{"run", "-d", "--session", "a/b", "--", "true"},
		{"run", "--session", "s\x07", "--", "true"},
		{"run", "-e", "A\nB=1", "--", "true"},
		{"run", "-e", "A\x01=1", "--", "true"},
		{"kill", "all", "--session", "../x"},
	} {
		r := e.cs(args...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%q: code %d err %q", args, r.code, r.stderr)
		}
	}
}

// pyBinaryAttacks tries to write the cshell binary from inside a shell
// (CVE-2019-5736's way in): through every process's /proc/PID/exe and
// through /.cshell/cshell, where the shell's PID 1 comes from, opened for
// writing directly and reopened for writing from an O_PATH descriptor,
// then renamed and removed. It prints one line for each try.
const pyBinaryAttacks = `python3 -c '
import os
tries = [("/.cshell/cshell", "/.cshell/cshell")]
for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
    tries.append(("exe of pid " + pid, "/proc/" + pid + "/exe"))
for what, path in tries:
    try:
        os.close(os.open(path, os.O_WRONLY)); print("WROTE", what)
    except OSError as e:
        print("refused open", what, e.strerror)
    try:
        fd = os.open(path, os.O_PATH)
        try:
            os.close(os.open("/proc/self/fd/%d" % fd, os.O_RDWR)); print("WROTE reopened", what)
        finally:
            os.close(fd)
    except OSError as e:
        print("refused reopen", what, e.strerror)
for what, f in [("rename", lambda: os.rename("/.cshell/cshell", "/.cshell/old")),
                ("unlink", lambda: os.unlink("/.cshell/cshell"))]:
    try:
        f(); print("DONE", what)
    except OSError as e:
        print("refused", what, e.strerror)
' `

// TestBinaryOutOfReach: a shell cannot write the cshell binary it was
// started from, even one its user owns and may write on the host. Rootless,
// runc init runs from the binary itself rather than a sealed copy
// (third_party/runc.patch), so this is what holds the binary: no process
// of the shell exists before PID 1 executes the read-only bind, and PID 1
// is not dumpable.
func TestBinaryOutOfReach(t *testing.T) {
	requireLinux(t)
	// (Copied and hashed a piece at a time: a later test measures a
	// child's peak memory, which counts this process's until it execs.)
	self := filepath.Join(t.TempDir(), "cshell")
	if out, err := exec.Command("cp", cshellBin, self).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	if err := os.Chmod(self, 0o755); err != nil {
		t.Fatal(err)
	}
	before := fileHash(t, self)
	for _, flags := range [][]string{nil, {"--allow-userns"}} {
		cmd := exec.Command(self, append(append([]string{"run"}, flags...), "--", pyBinaryAttacks)...)
		cmd.Dir = t.TempDir()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		got := out.String()
		if err != nil || strings.Contains(got, "WROTE") || strings.Contains(got, "DONE") ||
			strings.Count(got, "refused open") < 2 || !strings.Contains(got, "refused reopen exe of pid 1 ") ||
			!strings.Contains(got, "refused rename") || !strings.Contains(got, "refused unlink") {
			t.Errorf("%v: the binary within reach: %v, out %q err %q", flags, err, got, errb.String())
		}
	}
	if fileHash(t, self) != before {
		t.Error("the cshell binary changed on the host")
	}
}

// fileHash is the SHA-256 of a file's content, read a piece at a time.
func fileHash(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
