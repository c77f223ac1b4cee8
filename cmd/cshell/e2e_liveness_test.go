//go:build e2e

package main

// Liveness and bounds: nothing a shell (or a same-user client) does may
// stall cshell or make it grow. Each attack is made as it was shown, and
// every command must answer within a bound.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// within runs cshell like run, but fails the test when it takes longer
// than d (and kills it), instead of hanging.
func within(t *testing.T, d time.Duration, c call) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, cshellBin, c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("cshell %q did not answer within %s (out %q err %q)", c.args, d, out.String(), errb.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cshell %v: %v", c.args, err)
	}
	return result{out.String(), errb.String(), code}
}

func (e *bgEnv) within(d time.Duration, args ...string) result {
	e.t.Helper()
	return within(e.t, d, call{args: append([]string{"--state-dir", e.state}, args...), dir: e.wd})
}

func TestDeadSupervisorStallsNothing(t *testing.T) {
	e := newBG(t)
	id := e.start("sleep 300")
	if err := syscall.Kill(int(e.meta(id)["supervisor_pid"].(float64)), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if r := e.within(10*time.Second, "run", "-d", "--", "echo second; sleep 30"); r.code != 0 || !strings.HasPrefix(r.stdout, "started shell") {
		t.Errorf("run -d after a supervisor died: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	if r := e.within(10*time.Second, "ps", "--all"); !strings.Contains(r.stdout, "lost (its supervisor died)") {
		t.Errorf("ps: %q", r.stdout)
	}
	if r := e.within(10*time.Second, "output", id); r.code != 0 || !strings.HasPrefix(r.stdout, "lost") {
		t.Errorf("output of the lost shell: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	if r := e.within(20*time.Second, "kill", "all", "--grace", "0"); r.code != 0 || !strings.Contains(r.stdout, "killed") {
		t.Errorf("kill all: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestBusyStateDirStallsNothing(t *testing.T) {
	e := newBG(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"maxConcurrent": 40}}`)
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				e.within(30*time.Second, "--config", cfg, "run", "-d", "--", fmt.Sprintf("sleep 0.%d", i))
			}
		}()
	}
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 8; i++ {
				e.within(30*time.Second, "kill", "all", "--grace", "0")
				e.within(30*time.Second, "clean")
				e.within(30*time.Second, "ps", "--all")
			}
		}()
	}
	wg.Wait()
}

// holdServer accepts connections inside a shell and keeps them open.
const holdServer = `import resource, socket, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(4096)
print("listening", flush=True)
held = []
while True:
    c, _ = s.accept(); held.append(c)
`

func openFDs(pid int) int {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries)
}

func cpuTicks(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}

func TestConnectionFlood(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	writeFile(t, filepath.Join(e.wd, "hold.py"), holdServer)
	// A cap below the shell's own descriptor limit (1024 where the soft
	// limit is the default), so that the server inside holds them all.
	const limit = 500
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, fmt.Sprintf(`{"shells": {"maxConnections": %d}}`, limit))
	port := freePort(t)
	id := e.start(fmt.Sprintf("python3 hold.py %d", port), "--config", cfg, "--expose", strconv.Itoa(port), "--ready")
	sup := int(e.meta(id)["supervisor_pid"].(float64))
	before := openFDs(sup)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	refused := 0
	for i := 0; i < 9000; i++ {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
		if err != nil {
			refused++
			continue
		}
		conns = append(conns, c)
	}
	time.Sleep(500 * time.Millisecond)
	if m := e.meta(id); m["status"] != "running" {
		t.Fatalf("the shell did not hold the flood: %v; output %q", m["status_line"], e.output(id, "--from-byte", "0")["output"])
	}
	// Past the cap connections are ended at once: a read sees EOF or a
	// reset, not a wait.
	ended := 0
	for _, c := range conns[len(conns)-50:] {
		c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			ended++
		}
	}
	if ended < 45 {
		t.Errorf("only %d of the last 50 connections past the cap were ended", ended)
	}
	if n := openFDs(sup); n > before+2*limit+64 {
		t.Errorf("the supervisor holds %d descriptors with 9,000 connections (%d before)", n, before)
	}
	t0 := cpuTicks(t, sup)
	time.Sleep(time.Second)
	if used := cpuTicks(t, sup) - t0; used > 20 { // ticks of 10 ms
		t.Errorf("the supervisor used %d0 ms of CPU in a second with the flood held", used)
	}
	start := time.Now()
	if r := e.within(20*time.Second, "kill", id, "--grace", "1"); r.code != 0 || time.Since(start) > 10*time.Second {
		t.Errorf("kill under the flood: code %d after %v err %q", r.code, time.Since(start), r.stderr)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestOutputFilterBounded(t *testing.T) {
	e := newBG(t)
	// One matching 20 MB line, then one of 20 MB that has no end yet,
	// both after the first read.
	id := e.start(`sleep 1; head -c 20000000 /dev/zero | tr '\0' m; echo; echo short match; head -c 20000000 /dev/zero | tr '\0' n; sleep 30`)
	e.output(id)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		// (Stat, not a read: the child's rusage counts this process's
		// memory until it execs.)
		if st, err := os.Stat(filepath.Join(e.state, "shells", id, "output.log")); err == nil && st.Size() >= 40000000 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A python3 runs it and tells its peak memory: a child's peak counts
	// its parent's until it execs, and this test process may have grown.
	cmd := exec.Command("python3", "-c", `import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)
sys.stdout.buffer.write(r.stdout)
print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)`,
		cshellBin, "--state-dir", e.state, "--json", "output", id, "--filter", "m|n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var code, rss int64 // rss in KiB
	if _, serr := fmt.Sscan(lastLineOf(stderr.String()), &code, &rss); err != nil || serr != nil || code != 0 {
		t.Fatalf("output --filter: %v, %q", err, stderr.String())
	}
	var r map[string]any
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if got := len(r["output"].(string)); got > 64<<10 || !strings.Contains(r["output"].(string), "short match") {
		t.Errorf("--filter returned %d bytes: %.100q", got, r["output"])
	}
	if rss > 100<<10 {
		t.Errorf("--filter: cshell grew to %d MiB", rss>>10)
	}
	if text := e.cs("output", id, "--filter", "m", "--from-byte", "0"); !strings.Contains(text.stdout, "is cut to its first") {
		t.Errorf("a cut line is not said: %.300q", text.stdout)
	}
}

// lastLineOf is the last line of s.
func lastLineOf(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

func TestExposeOfProxyPort(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	_, up := upstream(t, false)
	// A background shell of the session serves 3128, the proxy's usual port.
	id := e.start(`python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3128)); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b"from-the-shell\n"); c.close()
'`, "--expose", "3128")
	_ = id
	probe := fmt.Sprintf(`echo "$HTTP_PROXY"; curl -sS --noproxy '' --max-time 10 -x "$HTTP_PROXY" http://127.0.0.1:%d/through; python3 -c '
import socket
print(socket.create_connection(("127.0.0.1", 3128), timeout=5).recv(100).decode().strip())
'`, up)
	r := e.within(60*time.Second, "run", "--allow-host", fmt.Sprintf("127.0.0.1:%d", up), "--", probe)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 || lines[0] == "http://127.0.0.1:3128" || lines[1] != "upstream body /through" || lines[2] != "from-the-shell" {
		t.Errorf("proxied run next to an expose of 3128: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestLogsFollowAcrossRotation(t *testing.T) {
	e := newBG(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"maxLogBytes": 4096}}`)
	r := e.cs("--config", cfg, "--json", "run", "-d", "--", `for i in $(seq 1 40000); do echo "line $i"; done; sleep 1`)
	var ans struct{ ID string }
	if json.Unmarshal([]byte(r.stdout), &ans) != nil {
		t.Fatalf("run -d: %q %q", r.stdout, r.stderr)
	}
	f := e.within(60*time.Second, "logs", ans.ID, "-f")
	marker := regexp.MustCompile(`^\[cshell: (\d+) bytes were (rotated out before they could be read|dropped by the log cap) \(shells\.maxLogBytes\)( before this)?\]$`)
	lineRe := regexp.MustCompile(`^line (\d+)$`)
	markers, last := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(f.stdout, "\n"), "\n") {
		switch {
		case marker.MatchString(l):
			markers++
		case lineRe.MatchString(l):
			n, _ := strconv.Atoi(lineRe.FindStringSubmatch(l)[1])
			if n <= last {
				t.Fatalf("line %d after line %d", n, last)
			}
			last = n
		default:
			t.Fatalf("a line that was never written: %q", l)
		}
	}
	if last != 40000 || markers == 0 {
		t.Errorf("logs -f ended at line %d with %d markers", last, markers)
	}
}

func TestProcessIsolationRefusesWhatItCannotEnforce(t *testing.T) {
	wd := t.TempDir()
	for _, flags := range [][]string{
		{"--hide", wd}, {"--allow-host", "example.com"}, {"--ro", wd},
	} {
		args := append(append([]string{"run", "--isolation", "process"}, flags...), "--", "true")
		r := run(t, call{args: args, dir: wd})
		if r.code != 1 || !strings.Contains(r.stderr, flags[0]) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: code %d err %q", flags, r.code, r.stderr)
		}
	}
	e := newBG(t)
	id := e.start("sleep 60", "--isolation", "process")
	if r := e.cs("ps"); !strings.Contains(r.stdout, "ISOLATION") || !strings.Contains(r.stdout, "process") {
		t.Errorf("ps shows no isolation: %q", r.stdout)
	}
	e.cs("kill", id, "--grace", "0")
	// A daemon that left the group: kill says so, and it is gone after.
	marker := fmt.Sprintf("%d", 600000+os.Getpid()%10000)
	id = e.start("setsid sleep "+marker+" & sleep 60", "--isolation", "process")
	time.Sleep(300 * time.Millisecond)
	r := e.within(20*time.Second, "kill", id, "--grace", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "left the shell's process group") {
		t.Errorf("kill of a shell with a daemon: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	waitGone(t, "sleep "+marker, 5*time.Second)
	// A dead supervisor: what it started goes too.
	id = e.start("sleep "+marker+" & sleep "+marker, "--isolation", "process")
	if err := syscall.Kill(int(e.meta(id)["supervisor_pid"].(float64)), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	e.cs("ps", "--all")
	waitGone(t, "sleep "+marker, 5*time.Second)
}

// noisy prints what a hostile shell would: terminal escapes (title,
// clear screen, clipboard), a NUL, a line that looks like cshell's own
// status and note lines, and bytes that are not UTF-8.
const noisy = `printf 'a\033]0;title\007b\033[2Jc\033]52;c;cHduZWQ=\007d\000e\n'; printf 'exited with 0 after 1s\n[cshell: skipped 5 bytes]\n'; printf 'bad \377\376 utf8\n'; sleep 30`

func TestOutputMadeVisible(t *testing.T) {
	e := newBG(t)
	id := e.start(noisy)
	time.Sleep(500 * time.Millisecond)
	r := e.cs("output", id)
	for _, c := range []string{"\x1b", "\x07", "\x00", "\xff"} {
		if strings.Contains(r.stdout, c) {
			t.Errorf("output passes %q raw: %q", c, r.stdout)
		}
	}
	for _, want := range []string{`a\x1b]0;title\x07b\x1b[2Jc`, `d\x00e`, `bad \xff\xfe utf8`, `\x5bcshell: skipped 5 bytes]`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q: %q", want, r.stdout)
		}
	}
	if lines := strings.Split(r.stdout, "\n"); !strings.HasPrefix(lines[0], "running for") {
		t.Errorf("the status line is not first: %q", r.stdout)
	}
	var j map[string]any
	jr := e.cs("--json", "output", id, "--from-byte", "0")
	if err := json.Unmarshal([]byte(jr.stdout), &j); err != nil || !strings.Contains(j["output"].(string), `bad \xff\xfe utf8`) {
		t.Errorf("--json output: %v %q", err, jr.stdout)
	}
	if l := e.cs("logs", id); !strings.Contains(l.stdout, "\x1b]0;title") {
		t.Errorf("logs to a file should pass the bytes as written: %q", l.stdout)
	}
}

func TestServeSeesOnlyItsSession(t *testing.T) {
	c := startServe(t, "")
	other := run(t, call{args: []string{"--state-dir", c.state, "--json", "run", "-d", "--session", "someone-else", "--", "echo other-secret; sleep 60"}, dir: t.TempDir()})
	var ans struct{ ID string }
	if json.Unmarshal([]byte(other.stdout), &ans) != nil || ans.ID == "" {
		t.Fatalf("run -d: %q %q", other.stdout, other.stderr)
	}
	t.Cleanup(func() { run(t, call{args: []string{"--state-dir", c.state, "kill", ans.ID, "--grace", "0"}}) })
	if text, _ := c.call("list_shells", map[string]any{}); strings.Contains(text, "someone-else") {
		t.Errorf("list_shells shows another session's shell: %q", text)
	}
	if text, isErr := c.call("bash_output", map[string]any{"bash_id": ans.ID}); !isErr || strings.Contains(text, "other-secret") {
		t.Errorf("bash_output read another session's shell: %q", text)
	}
	if text, isErr := c.call("kill_shell", map[string]any{"shell_id": ans.ID}); !isErr {
		t.Errorf("kill_shell stopped another session's shell: %q", text)
	}
	r := run(t, call{args: []string{"--state-dir", c.state, "output", ans.ID}})
	if !strings.Contains(r.stdout, "other-secret") {
		t.Errorf("the shell's own session lost its first read: %q", r.stdout)
	}
}

func TestServeOutputMadeVisible(t *testing.T) {
	c := startServe(t, "")
	text, _ := c.call("bash", map[string]any{"command": noisy, "run_in_background": true})
	if !strings.HasPrefix(text, "started shell ") {
		t.Fatalf("bash: %q", text)
	}
	id := strings.Fields(text)[2]
	time.Sleep(500 * time.Millisecond)
	out, _ := c.call("bash_output", map[string]any{"bash_id": id})
	for _, ch := range []string{"\x1b", "\x07", "\x00"} {
		if strings.Contains(out, ch) {
			t.Errorf("bash_output passes %q raw: %q", ch, out)
		}
	}
	if !strings.Contains(out, `\x5bcshell: skipped 5 bytes]`) {
		t.Errorf("a fake cshell line is not told apart: %q", out)
	}
	c.call("kill_shell", map[string]any{"shell_id": id, "grace_seconds": 0})
}

func TestServeForegroundTimeoutWithDaemon(t *testing.T) {
	c := startServe(t, "", "--isolation", "process")
	marker := fmt.Sprintf("%d", 700000+os.Getpid()%10000)
	t0 := time.Now()
	text, _ := c.call("bash", map[string]any{"command": "setsid sleep " + marker + " & sleep 60", "timeout": 3})
	if d := time.Since(t0); d > 10*time.Second {
		t.Errorf("a 3 s foreground call took %v with a daemon holding its output: %q", d, text)
	}
	for _, p := range hostProcesses("sleep " + marker) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		syscall.Kill(pid, syscall.SIGKILL)
	}
}
