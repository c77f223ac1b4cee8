//go:build e2e

package main

// The kernel's surface and the machine's resources: the syscall filter
// (each blocked call made directly, as an exploit makes it), what ordinary
// work needs under it, the host's own secrets, and the limits.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// syscallProbe calls each named system call directly (ctypes, x86-64
// numbers) and prints "name errno-name" for each.
const syscallProbe = `python3 -c '
import ctypes, errno, sys
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
calls = {
    "unshare_userns": (272, CLONE_NEWUSER | CLONE_NEWNET),
    "clone_userns": (56, CLONE_NEWUSER | 17, 0, 0, 0, 0),
    "clone3": (435, 0, 0),
    "io_uring_setup": (425, 1, 0),
    "keyctl": (250, 0, 0),
    "add_key": (248, 0, 0, 0, 0, 0),
    "request_key": (249, 0, 0, 0, 0),
    "userfaultfd_user": (323, 1),
    "perf_event_open": (298, 0, 0, -1, -1, 0),
    "bpf": (321, 0, 0, 0),
    "kexec_load": (246, 0, 0, 0, 0),
    "init_module": (175, 0, 0, 0),
    "swapon": (167, 0, 0),
    "reboot": (169, 0, 0, 0, 0),
    "clock_settime": (227, 0, 0),
    "mount": (165, 0, 0, 0, 0, 0),
}
for name in sys.argv[1:]:
    nr, *args = calls[name]
    r = libc.syscall(nr, *args)
    e = ctypes.get_errno()
    if r == 0 and name == "clone_userns":
        import os; os._exit(0)  # the child of a clone that was allowed
    print(name, "ok" if r >= 0 else errno.errorcode.get(e, e))
' `

var blocked = map[string]string{
	"unshare_userns": "EPERM", "clone_userns": "EPERM", "clone3": "ENOSYS", "io_uring_setup": "EPERM",
	"keyctl": "EPERM", "add_key": "EPERM", "request_key": "EPERM", "userfaultfd_user": "EPERM",
	"perf_event_open": "EPERM", "bpf": "EPERM", "kexec_load": "EPERM", "init_module": "EPERM",
	"swapon": "EPERM", "reboot": "EPERM", "clock_settime": "EPERM", "mount": "EPERM",
}

func requireAMD64(t *testing.T) {
	requireLinux(t)
	if runtime.GOARCH != "amd64" {
		t.Skipf("the probes call x86-64 system call numbers; this is %s", runtime.GOARCH)
	}
}

func TestSyscallFilter(t *testing.T) {
	requireAMD64(t)
	var names []string
	for n := range blocked {
		names = append(names, n)
	}
	r := sh(t, "container", t.TempDir(), "grep '^Seccomp:' /proc/self/status; "+syscallProbe+strings.Join(names, " "))
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			got[strings.TrimSuffix(f[0], ":")] = f[1]
		}
	}
	if got["Seccomp"] != "2" {
		t.Errorf("Seccomp: %q, want 2 (a filter): %q %q", got["Seccomp"], r.stdout, r.stderr)
	}
	for name, want := range blocked {
		if got[name] != want {
			t.Errorf("%s: %q, want %s", name, got[name], want)
		}
	}
	// --allow-userns lifts exactly the user-namespace rules.
	r = sh(t, "container", t.TempDir(), syscallProbe+"unshare_userns clone3 io_uring_setup keyctl bpf; unshare -Ur id -u", "--allow-userns")
	if r.stdout != "unshare_userns ok\nclone3 EINVAL\nio_uring_setup EPERM\nkeyctl EPERM\nbpf EPERM\n0\n" { // clone3 allowed: the kernel refuses its empty arguments
		t.Errorf("--allow-userns: %q %q", r.stdout, r.stderr)
	}
	if os.Geteuid() != 0 {
		// Rootless, a sandbox of the shell's own works too.
		if r := sh(t, "container", t.TempDir(), "bwrap --unshare-all --ro-bind / / --proc /proc --dev /dev true && echo nested", "--allow-userns"); r.stdout != "nested\n" {
			t.Errorf("bubblewrap inside --allow-userns: %q %q", r.stdout, r.stderr)
		}
	}
	// A refused user namespace is told, with the flag that allows it:
	// on stderr in the foreground, as a violation of a background shell.
	if r := sh(t, "container", t.TempDir(), syscallProbe+"unshare_userns"); !strings.Contains(r.stderr, "refused unshare(CLONE_NEWUSER)") || !strings.Contains(r.stderr, "--allow-userns") {
		t.Errorf("no hint in the foreground: %q", r.stderr)
	}
	e := newBG(t)
	id := e.start(syscallProbe + "unshare_userns; sleep 30")
	deadline := time.Now().Add(10 * time.Second)
	var v []any
	for time.Now().Before(deadline) && len(v) == 0 {
		v, _ = e.output(id)["violations"].([]any)
		time.Sleep(100 * time.Millisecond)
	}
	if len(v) != 1 || !strings.Contains(fmt.Sprint(v[0]), "--allow-userns") {
		t.Errorf("no violation for the refused user namespace: %v", v)
	}
	id = e.start("sleep 30", "--allow-userns")
	if m := e.meta(id); m["allow_userns"] != true {
		t.Errorf("ps --json: allow_userns %v", m["allow_userns"])
	}
	id = e.start("sleep 30")
	if m := e.meta(id); m["allow_userns"] != false {
		t.Errorf("ps --json: allow_userns %v without the flag", m["allow_userns"])
	}
}

func TestOrdinaryWorkUnderTheFilter(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	writeFile(t, filepath.Join(wd, "hello.c"), "#include <stdio.h>\n#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); pthread_join(t, 0); puts(\"compiled and ran\"); return 0; }\n")
	writeFile(t, filepath.Join(wd, "serve.py"), `import http.server, threading, urllib.request, multiprocessing
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
print(urllib.request.urlopen("http://127.0.0.1:%d/hello.c" % srv.server_port).status)
with multiprocessing.Pool(2) as p:
    print(sum(p.map(abs, [-1, -2, -3])))
`)
	writeFile(t, filepath.Join(wd, "serve.js"), `const http = require("http");
const s = http.createServer((q, r) => r.end("node ok")).listen(0, "127.0.0.1", () => {
  http.get({port: s.address().port, host: "127.0.0.1"}, (r) => { let b = ""; r.on("data", (d) => b += d); r.on("end", () => { console.log(b); s.close(); }); });
});
`)
	cmd := "gcc -pthread -o hello hello.c && ./hello && python3 serve.py && node serve.js && strace -f -o /dev/null sh -c 'sleep 0.1 & wait' && echo traced"
	r := sh(t, "container", wd, cmd)
	if r.code != 0 || r.stdout != "compiled and ran\n200\n6\nnode ok\ntraced\n" {
		t.Errorf("code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestHostSecretsHidden(t *testing.T) {
	requireLinux(t)
	if os.Geteuid() == 0 {
		// A root-only file planted where the host's keys are.
		key := "/etc/ssh/ssh_host_cshelle2e_key"
		if _, err := os.Stat("/etc/ssh"); err == nil {
			if err := os.WriteFile(key, []byte("HOST-PRIVATE-KEY\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(key) })
			if r := sh(t, "container", t.TempDir(), "cat "+key+" 2>&1"); strings.Contains(r.stdout, "HOST-PRIVATE-KEY") {
				t.Errorf("a root-only host key was readable: %q", r.stdout)
			}
		}
	}
	r := sh(t, "container", t.TempDir(), "head -c 100 /etc/shadow 2>/dev/null | grep -c root; stat -c %a /etc/shadow; ls /etc/ssl/private 2>&1 | head -1")
	if strings.HasPrefix(r.stdout, "1") || !strings.Contains(r.stdout, "\n0\n") {
		t.Errorf("/etc/shadow inside: %q %q", r.stdout, r.stderr)
	}
}

func TestLimits(t *testing.T) {
	requireLinux(t)
	// Memory: a program that touches 400 MiB under --memory 64m.
	touch := `python3 -c 'b = bytearray(400 << 20); print("touched all")'`
	r := sh(t, "container", t.TempDir(), touch, "--memory", "64m")
	if r.code != 137 || strings.Contains(r.stdout, "touched all") || !strings.Contains(r.stderr, "killed: memory limit (64 MiB) reached after") {
		t.Errorf("foreground over --memory: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	e := newBG(t)
	id := e.start("sleep 0.2; "+touch, "--memory", "64m")
	e.waitEnd(id)
	m := e.meta(id)
	limits, _ := m["limits"].(map[string]any)
	if !strings.HasPrefix(fmt.Sprint(m["status_line"]), "killed: memory limit (64 MiB) reached after") || limits["memory"] != float64(64<<20) {
		t.Errorf("background over --memory: %v %v", m["status_line"], m["limits"])
	}
	want := "watchdog"
	if os.Geteuid() == 0 {
		want = "cgroup"
	}
	if limits["enforced_by"] != want {
		t.Errorf("enforced_by %v, want %s", limits["enforced_by"], want)
	}
	if o := e.output(id); !strings.Contains(o["status_line"].(string), "memory limit") {
		t.Errorf("output's status: %v", o["status_line"])
	}
	// Processes: 100 forks under --pids 32. The program carries a name of
	// the test's own (exec -a): another python3 on this machine is not it.
	marker := fmt.Sprintf("cshell-e2e-forks-%d", os.Getpid())
	forks := `exec -a ` + marker + ` python3 -c '
import os, time
made = 0
for i in range(100):
    try:
        if os.fork() == 0:
            time.sleep(3); os._exit(0)
        made += 1
    except OSError:
        pass
print("made", made, flush=True)
time.sleep(1)
'`
	r = sh(t, "container", t.TempDir(), forks, "--pids", "32")
	var made int
	fmt.Sscanf(r.stdout, "made %d", &made)
	if made >= 32 && !strings.Contains(r.stderr, "process limit (32)") {
		t.Errorf("100 forks under --pids 32: %q %q", r.stdout, r.stderr)
	}
	waitGone(t, marker, 10*time.Second)
	// Bad values are refused before anything runs.
	for _, bad := range [][]string{{"--memory", "bogus"}, {"--memory", "0"}, {"--memory", "-1g"}, {"--pids", "0"}, {"--pids", "-3"}, {"--cpus", "0"}, {"--cpus", "-1"}, {"--cpus", "1000"}} {
		if r := sh(t, "container", t.TempDir(), "true", bad...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: code %d err %q", bad, r.code, r.stderr)
		}
	}
	if r := sh(t, "process", t.TempDir(), "true", "--memory", "1g"); r.code != 1 || !strings.Contains(r.stderr, "--memory") {
		t.Errorf("--isolation process --memory: code %d err %q", r.code, r.stderr)
	}
}

func TestLimitsFromConfig(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"limits": {"memory": "256m", "pids": 200}}`)
	writeFile(t, filepath.Join(wd, ".cshell.json"), `{"limits": {"memory": "1g", "pids": 100}}`)
	e := newBG(t)
	e.wd = wd
	r := e.cs("--config", cfg, "--json", "run", "-d", "--memory", "512m", "--", "sleep 30")
	var ans struct{ ID string }
	if json.Unmarshal([]byte(r.stdout), &ans) != nil {
		t.Fatalf("run -d: %q %q", r.stdout, r.stderr)
	}
	limits, _ := e.meta(ans.ID)["limits"].(map[string]any)
	if limits["memory"] != float64(256<<20) || limits["pids"] != 100.0 {
		t.Errorf("layered limits %v", limits)
	}
	if !strings.Contains(r.stderr, "limits.memory=1 GiB (global: 256 MiB)") || !strings.Contains(r.stderr, "--memory 512 MiB is above the configuration's limit") {
		t.Errorf("warnings: %q", r.stderr)
	}
}

func TestCPULimit(t *testing.T) {
	requireLinux(t)
	busy := `python3 -c '
import os, time
t = time.time()
while time.time() - t < 2: pass
print(round(os.times().user + os.times().system, 1))
'`
	r := sh(t, "container", t.TempDir(), busy, "--cpus", "0.5")
	if os.Geteuid() != 0 {
		if r.code != 1 || !strings.Contains(r.stderr, "needs a cgroup") {
			t.Errorf("--cpus rootless: code %d err %q", r.code, r.stderr)
		}
		return
	}
	used, err := strconv.ParseFloat(strings.TrimSpace(r.stdout), 64)
	if err != nil || used < 0.6 || used > 1.4 {
		t.Errorf("a busy loop under --cpus 0.5 for 2 s used %q s of CPU (err %q), want about 1", r.stdout, r.stderr)
	}
}

// A process the memory limit's OOM killer ends while its shell runs on is
// told: output's violations, events and stderr say "memory limit (64 MiB)
// reached: python3 (pid N) killed". Rootless, cshell's watchdog ends the
// whole shell at the limit, which its status says.
func TestMemoryLimitKillIsTold(t *testing.T) {
	requireLinux(t)
	hog := `python3 -c 'b = bytearray(300 << 20); print("touched all")'`
	e := newBG(t)
	id := e.start("sleep 0.3; "+hog+"; echo the shell goes on; sleep 30", "--memory", "64m")
	var seen strings.Builder
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		seen.WriteString(e.cs("output", id).stdout)
		text := seen.String()
		if os.Geteuid() != 0 {
			// Rootless: the watchdog ends the whole shell at the bound.
			if strings.Contains(text, "killed: memory limit (64 MiB) reached") {
				return
			}
		} else if strings.Contains(text, "the shell goes on") && strings.Contains(text, "violation: memory limit") {
			if !regexp.MustCompile(`violation: memory limit \(64 MiB\) reached: python3 \(pid \d+\) killed`).MatchString(text) {
				t.Errorf("output: %q", text)
			}
			if m := e.meta(id); m["status"] != "running" {
				t.Errorf("the shell should run on: %v", m["status_line"])
			}
			ev := e.cs("--json", "events")
			if !strings.Contains(ev.stdout, `"event":"limit"`) || !strings.Contains(ev.stdout, `"detail":"memory limit (64 MiB) reached: python3 (pid `) {
				t.Errorf("events: %q", ev.stdout)
			}
			// In the foreground, stderr says it.
			r := sh(t, "container", t.TempDir(), hog+"; true", "--memory", "64m")
			if r.code != 0 || !strings.Contains(r.stderr, "cshell: memory limit (64 MiB) reached: python3 (pid ") {
				t.Errorf("foreground: code %d, stderr %q", r.code, r.stderr)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the limit was never told: %q", seen.String())
}

// TestShellInItsCgroupsFirst: the shell's cgroup namespace has the
// shell's own cgroup as its root (every hierarchy reads "/" inside), and
// as root the command is in the shell's cgroups, not cshell's: the init
// moves into them while it starts (Process.LateCgroups,
// third_party/runc.patch) and makes its cgroup namespace only once there.
func TestShellInItsCgroupsFirst(t *testing.T) {
	requireLinux(t)
	r := sh(t, "container", t.TempDir(), "cat /proc/self/cgroup")
	lines := strings.Fields(r.stdout)
	if r.code != 0 || len(lines) == 0 {
		t.Fatalf("cat /proc/self/cgroup: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	for _, l := range lines {
		if !strings.HasSuffix(l, ":/") {
			t.Errorf("inside the shell %q: want the shell's cgroup as its namespace's root (every line \":/\")", r.stdout)
			break
		}
	}
	if os.Geteuid() != 0 {
		return // rootless, cshell makes no cgroups on this kind of host
	}
	marker := fmt.Sprintf("cshell-e2e-cgroups-%d", os.Getpid())
	e := newBG(t)
	id := e.start("exec -a " + marker + " sleep 30")
	t.Cleanup(func() { e.cs("kill", id) })
	var procs []string
	deadline := time.Now().Add(10 * time.Second)
	for len(procs) == 0 && time.Now().Before(deadline) {
		procs = hostProcesses(marker)
		time.Sleep(20 * time.Millisecond)
	}
	if len(procs) != 1 {
		t.Fatalf("host processes %q: %v", marker, procs)
	}
	pid, _, _ := strings.Cut(procs[0], " ")
	theirs, err := os.ReadFile("/proc/" + pid + "/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	ours, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	own := map[string]string{}
	for _, l := range strings.Fields(string(ours)) {
		if parts := strings.SplitN(l, ":", 3); len(parts) == 3 {
			own[parts[1]] = parts[2]
		}
	}
	want := []string{"memory", "pids", "devices"} // cgroup v1
	if _, v1 := own["memory"]; !v1 {
		want = []string{""} // the unified hierarchy alone
	}
	checked := 0
	for _, l := range strings.Fields(string(theirs)) {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 || !slices.Contains(want, parts[1]) {
			continue
		}
		checked++
		if parts[2] == own[parts[1]] || !strings.Contains(parts[2], "sh"+id+"-") {
			t.Errorf("the command's cgroup %q is %q (cshell's test: %q), want shell %s's own", parts[1], parts[2], own[parts[1]], id)
		}
	}
	if checked != len(want) {
		t.Errorf("the command's cgroups name %d of %q: %q", checked, want, theirs)
	}
}
