//go:build e2e

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pid1Age is a command that prints how long the shell's PID 1 has run,
// in ms, from the kernel's clock (/proc/uptime and PID 1's start time):
// a warm sandbox's PID 1 was made before its call was sent, a cold one's
// during the call.
const pid1Age = `read -r up _ < /proc/uptime; start=$(cut -d' ' -f22 /proc/1/stat); ` +
	`awk -v u="$up" -v s="$start" -v h="$(getconf CLK_TCK)" 'BEGIN { printf "pid1-age %d\n", (u - s / h) * 1000 }'`

var ageLine = regexp.MustCompile(`pid1-age (-?\d+)`)

// age is the PID 1 age a call's output tells.
func age(t *testing.T, out string) time.Duration {
	t.Helper()
	m := ageLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pid1-age in %q", out)
	}
	ms, _ := strconv.Atoi(m[1])
	return time.Duration(ms) * time.Millisecond
}

// heldInits are the host pids of the held (warm) PID 1s whose mounts
// name dir: the test's own, by its working directory.
func heldInits(dir string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 3 || args[1] != "__pid1" || args[len(args)-1] != "--held" || !strings.Contains(string(b), " "+dir+"\x00") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// resolverListens reports whether the shell's resolver (TCP
// 127.0.0.53:53, among the last things a sandbox's start makes) listens
// in pid's network namespace: its PID 1 alone is not yet a sandbox a
// call can take.
func resolverListens(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[1] == "3500007F:0035" && f[3] == "0A" {
			return true
		}
	}
	return false
}

// waitWarm waits until one warm sandbox of the test's waits, and returns
// its PID 1.
func waitWarm(t *testing.T, dir string) int {
	t.Helper()
	return waitWarmBut(t, dir, 0)
}

// waitWarmBut is waitWarm for a sandbox other than the one whose PID 1 is
// old: one a call found unfit may still be closing when the call ends.
func waitWarmBut(t *testing.T, dir string, old int) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if p := heldInits(dir); len(p) == 1 && p[0] != old && resolverListens(p[0]) {
			return p[0]
		} else if len(p) > 1 {
			t.Fatalf("%d warm sandboxes wait, want one: %v", len(p), p)
		}
	}
	t.Fatal("no warm sandbox was made within 30 s")
	return 0
}

// TestServeWarmSandbox: foreground calls of cshell serve take a sandbox
// made ahead (its PID 1 older than the call), idle at no CPU cost, and
// each call's sandbox is fresh: nothing an earlier call left in /tmp or
// in its process tree is there. A change of the session's reached ports
// makes the sandbox made before it unfit: that call starts cold, and the
// next warm one reaches the port too. The server's end ends the one
// waiting.
func TestServeWarmSandbox(t *testing.T) {
	requireLinux(t)
	c := startServe(t, "", "--hide", "secret.txt")
	marker := fmt.Sprintf("warm-marker-%d", time.Now().UnixNano())
	// The hidden file exists from here on: the sandbox made at the
	// server's start (for a missing path) is unfit; this call finds it
	// so, starts cold, and the next one is made for the file.
	unfit := waitWarm(t, c.dir)
	writeFile(t, filepath.Join(c.dir, "secret.txt"), "old\n")
	c.call("bash", map[string]any{"command": "true"})

	pid := waitWarmBut(t, c.dir, unfit)
	before := cpuTicks(t, pid)
	time.Sleep(1500 * time.Millisecond)
	if after := cpuTicks(t, pid); after != before {
		t.Errorf("the idle warm sandbox's PID 1 used %d ticks of CPU in 1.5 s, want none", after-before)
	}
	out, isErr := c.call("bash", map[string]any{"command": pid1Age + `; echo left > /tmp/left; (exec -a ` + marker + ` sleep 600) & echo started`})
	if isErr || !strings.Contains(out, "started") {
		t.Fatalf("first call: %q", out)
	}
	if a := age(t, out); a < time.Second {
		// Say which: the warm one still waiting was not taken (not ready
		// yet, or found unfit), or none waited.
		t.Errorf("the first call's PID 1 is %v old, want the warm one (PID 1 %d) made over 1.5 s before; waiting now: %v", a, pid, heldInits(c.dir))
	}
	waitGone(t, marker, 10*time.Second) // the call's end ended its job

	waitWarm(t, c.dir)
	time.Sleep(time.Second)
	out, isErr = c.call("bash", map[string]any{"command": pid1Age + `; ls /tmp; ps -eo args`})
	if isErr {
		t.Fatalf("second call: %q", out)
	}
	if a := age(t, out); a < 800*time.Millisecond {
		t.Errorf("the second call's PID 1 is %v old, want a warm one", a)
	}
	if strings.Contains(out, "left") || strings.Contains(out, marker) {
		t.Errorf("the second call met what the first left: %q", out)
	}

	// The session's reached ports change: a background server.
	waitWarm(t, c.dir)
	port := freePort(t)
	out, isErr = c.call("bash", map[string]any{"command": fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port),
		"run_in_background": true, "expose": []string{strconv.Itoa(port)}, "ready": true})
	if isErr {
		t.Fatalf("background server: %q", out)
	}
	time.Sleep(1500 * time.Millisecond)
	reach := fmt.Sprintf("%s; curl -s -o /dev/null -w 'reached %%{http_code}\\n' http://127.0.0.1:%d/", pid1Age, port)
	out, _ = c.call("bash", map[string]any{"command": reach})
	if a := age(t, out); a >= time.Second {
		t.Errorf("the call after a new exposed port took a sandbox %v old, made without the port's reach", a)
	}
	if !strings.Contains(out, "reached 200") {
		t.Errorf("the cold call did not reach the session's server: %q", out)
	}
	waitWarm(t, c.dir)
	time.Sleep(time.Second)
	out, _ = c.call("bash", map[string]any{"command": reach})
	if a := age(t, out); a < 800*time.Millisecond {
		t.Errorf("the call after that took a sandbox %v old, want a warm one", a)
	}
	if !strings.Contains(out, "reached 200") {
		t.Errorf("the warm call did not reach the session's server: %q", out)
	}

	// A hidden file replaced on the host by a rename (as editors and
	// credential helpers write): the kernel takes the stand-in bound over
	// it out of the waiting sandbox, which would show the new file. PID 1
	// checks every mount again when its command comes; the call starts
	// cold, with the file hidden.
	waitWarm(t, c.dir)
	writeFile(t, filepath.Join(c.dir, "secret.new"), "TOP-SECRET-VALUE\n")
	if err := os.Rename(filepath.Join(c.dir, "secret.new"), filepath.Join(c.dir, "secret.txt")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	out, _ = c.call("bash", map[string]any{"command": pid1Age + "; cat secret.txt"})
	if strings.Contains(out, "TOP-SECRET") {
		t.Errorf("a hidden file renamed over while the warm sandbox waited was readable: %q", out)
	}
	if a := age(t, out); a >= time.Second {
		t.Errorf("the call after a hidden file was replaced took a sandbox %v old", a)
	}

	// The working directory replaced by another of its name: the warm
	// sandbox bound the old one, so the call starts cold, in the new one.
	waitWarm(t, c.dir)
	if err := os.Rename(c.dir, c.dir+".old"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(c.dir + ".old") })
	if err := os.Mkdir(c.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(c.dir, "new-folder-file"), "x")
	time.Sleep(time.Second)
	out, _ = c.call("bash", map[string]any{"command": pid1Age + "; ls", "cwd": c.dir})
	if a := age(t, out); a >= time.Second || !strings.Contains(out, "new-folder-file") {
		t.Errorf("the call after the folder was replaced: PID 1 %v old, output %q; want a cold start in the new folder", a, out)
	}

	// The server's end ends the warm sandbox waiting.
	pid = waitWarm(t, c.dir)
	c.cs.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the warm sandbox's PID 1 (%d) outlived its server by 10 s", pid)
		}
	}
}
