package wine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// The tests run cshell.exe (CSHELL_BIN) as a user would, in a state dir
// and a working directory of their own, with Windows' own programs (cmd,
// ping) as the commands, and look at processes through the Windows API.

var bin = os.Getenv("CSHELL_BIN")

// helperVar makes the test binary a command for a shell: "tree" starts
// itself again as a child ("sleep"), prints "pids PARENT CHILD" and
// sleeps; "sleep" sleeps. Their pids are the test's markers: a child
// made by CreateProcess names its parent (wine's cmd starts "start /b"
// children through start.exe, which ends, so a parent chain through cmd
// would break there).
const helperVar = "CSHELL_WINE_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperVar) {
	case "tree":
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), helperVar+"=sleep")
		if err := child.Start(); err != nil {
			fmt.Println("child:", err)
			os.Exit(1)
		}
		fmt.Printf("pids %d %d\n", os.Getpid(), child.Process.Pid)
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	case "sleep":
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type result struct {
	stdout, stderr string
	code           int
}

// cshell runs cshell.exe with args in the test's state dir.
func cshell(t *testing.T, state, dir string, args ...string) result {
	t.Helper()
	if bin == "" {
		t.Fatal("CSHELL_BIN names no cshell.exe")
	}
	cmd := exec.Command(bin, append([]string{"--state-dir", state}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("cshell %v: %v", args, err)
	}
	return r
}

// env is a state dir and a working directory of the test's own; at the
// test's end its shells are killed and their supervisors waited for, so
// that nothing holds the folders when they are removed.
func env(t *testing.T) (state, dir string) {
	state, dir = filepath.Join(t.TempDir(), "state"), t.TempDir()
	t.Cleanup(func() {
		cshell(t, state, dir, "kill", "all")
		for _, m := range ps(t, state, dir) {
			for deadline := time.Now().Add(20 * time.Second); alive(m.Supervisor) && time.Now().Before(deadline); {
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	return state, dir
}

type meta struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	StatusLine string `json:"status_line"`
	ExitCode   *int   `json:"exit_code"`
	Pid        int    `json:"pid"`
	Supervisor int    `json:"supervisor_pid"`
}

// ps is the state dir's shells (ps --all --json).
func ps(t *testing.T, state, dir string) map[string]meta {
	t.Helper()
	r := cshell(t, state, dir, "ps", "--all", "--json")
	var list []meta
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("ps --json: %v: %q %q", err, r.stdout, r.stderr)
	}
	m := map[string]meta{}
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

// start runs a background shell named name.
func start(t *testing.T, state, dir, name string, args ...string) meta {
	t.Helper()
	r := cshell(t, state, dir, append([]string{"run", "-d", "--name", name}, args...)...)
	if r.code != 0 || !strings.Contains(r.stdout, "started shell") {
		t.Fatalf("run -d %v: exit %d, %q %q", args, r.code, r.stdout, r.stderr)
	}
	m, ok := ps(t, state, dir)[name]
	if !ok {
		t.Fatalf("run -d %s: not listed", name)
	}
	return m
}

// waitFor polls until cond holds, for at most d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
	}
}

// alive reports whether pid runs (GetExitCodeProcess says STILL_ACTIVE).
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == 259
}

// TestForeground: a foreground command's output and exit code.
func TestForeground(t *testing.T) {
	state, dir := env(t)
	r := cshell(t, state, dir, "run", "--", "cmd", "/c", "echo hi-there & exit 3")
	if r.code != 3 || !strings.Contains(r.stdout, "hi-there") {
		t.Fatalf("run: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestBackgroundLifecycle: a background shell runs, lists, tells its
// output; a graceful signal is refused with a sentence; kill ends its
// whole tree (the command and the child it started) and lists it killed;
// clean forgets it.
func TestBackgroundLifecycle(t *testing.T) {
	state, dir := env(t)
	m := start(t, state, dir, "bg", "-e", helperVar+"=tree", "--", os.Args[0])
	if m.Status != "running" || m.Pid == 0 || m.Supervisor == 0 {
		t.Fatalf("ps: %+v", m)
	}
	var parent, child int
	waitFor(t, 20*time.Second, "the command's pids in its output", func() bool {
		out := cshell(t, state, dir, "output", "bg").stdout
		i := strings.Index(out, "pids ")
		return i >= 0 && strings.Contains(out[i:], "\n") && func() bool {
			_, err := fmt.Sscanf(out[i:], "pids %d %d", &parent, &child)
			return err == nil
		}()
	})
	if !alive(parent) || !alive(child) {
		t.Fatalf("the command (%d) and its child (%d) do not both run", parent, child)
	}
	r := cshell(t, state, dir, "kill", "--signal", "TERM", "bg")
	if r.code != 2 || !strings.Contains(r.stderr, "Windows has no graceful signal") {
		t.Errorf("kill --signal TERM: exit %d, %q; want 2 and the sentence", r.code, r.stderr)
	}
	if !alive(parent) {
		t.Error("the refused kill stopped the command")
	}
	r = cshell(t, state, dir, "kill", "bg")
	if r.code != 0 || !strings.Contains(r.stdout, "killed") {
		t.Fatalf("kill: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, pid := range []int{parent, child} {
		if alive(pid) {
			t.Errorf("pid %d of the killed shell still runs", pid)
		}
	}
	if got := ps(t, state, dir)["bg"]; got.Status != "killed" {
		t.Errorf("after kill: %+v", got)
	}
	if r := cshell(t, state, dir, "clean"); r.code != 0 {
		t.Errorf("clean: exit %d, %q", r.code, r.stderr)
	}
	if _, ok := ps(t, state, dir)["bg"]; ok {
		t.Error("clean left the ended shell listed")
	}
}

// TestWaitAndTimeout: wait gives a shell's exit code; --timeout ends one.
func TestWaitAndTimeout(t *testing.T) {
	state, dir := env(t)
	start(t, state, dir, "seven", "--", "cmd", "/c", "exit 7")
	if r := cshell(t, state, dir, "wait", "seven"); r.code != 7 {
		t.Errorf("wait: exit %d, %q %q; want 7", r.code, r.stdout, r.stderr)
	}
	waitFor(t, 10*time.Second, "the end's notice in events", func() bool {
		out := cshell(t, state, dir, "events").stdout
		return strings.Contains(out, "seven") && strings.Contains(out, "7")
	})
	m := start(t, state, dir, "slow", "--timeout", "2s", "--", "ping", "-n", "600", "127.0.0.7")
	cshell(t, state, dir, "wait", "slow")
	got := ps(t, state, dir)["slow"]
	if !strings.HasPrefix(got.StatusLine, "timed out") {
		t.Errorf("after its timeout: %+v", got)
	}
	if alive(m.Pid) {
		t.Errorf("the timed-out shell's command (pid %d) still runs", m.Pid)
	}
}

// TestLostSupervisor: a supervisor that dies takes its shell's tree with
// it (its job object closes) and the shell is listed lost.
func TestLostSupervisor(t *testing.T) {
	state, dir := env(t)
	m := start(t, state, dir, "orphan", "--", "ping", "-n", "600", "127.0.0.8")
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(m.Supervisor))
	if err != nil {
		t.Fatal(err)
	}
	err = windows.TerminateProcess(h, 1)
	windows.CloseHandle(h)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "the command's end with its supervisor", func() bool { return !alive(m.Pid) })
	waitFor(t, 20*time.Second, "the shell listed lost", func() bool { return ps(t, state, dir)["orphan"].Status == "lost" })
}

// TestOwnerEnds: a shell with --owner-pid ends when its owner does.
func TestOwnerEnds(t *testing.T) {
	state, dir := env(t)
	owner := exec.Command("ping", "-n", "600", "127.0.0.9")
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	defer owner.Process.Kill()
	m := start(t, state, dir, "owned", "--owner-pid", fmt.Sprint(owner.Process.Pid), "--", "ping", "-n", "600", "127.0.0.10")
	_ = owner.Process.Kill()
	_ = owner.Wait()
	waitFor(t, 30*time.Second, "the shell's end with its owner", func() bool {
		return ps(t, state, dir)["owned"].StatusLine == "killed (session ended)"
	})
	if alive(m.Pid) {
		t.Errorf("the owned shell's command (pid %d) still runs", m.Pid)
	}
}

// TestExposeIsDirect: --expose is taken, and the answer says the server
// is reachable directly (no relay off Linux).
func TestExposeIsDirect(t *testing.T) {
	state, dir := env(t)
	r := cshell(t, state, dir, "run", "-d", "--expose", "18123", "--", "cmd", "/c", "exit 0")
	if r.code != 0 || !strings.Contains(r.stdout, "reachable directly") {
		t.Errorf("run -d --expose: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestServeBackground: cshell serve, driven by raw JSON-RPC lines, starts
// a background shell, reads its output and stops it (TERM refused with
// the sentence); its command is gone after kill_shell; the server's end
// (stdin closed) ends it and the shells it started.
func TestServeBackground(t *testing.T) {
	state, dir := env(t)
	cmd := exec.Command(bin, "--state-dir", state, "serve")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	defer func() {
		in.Close()
		select {
		case <-served:
		case <-time.After(20 * time.Second):
			t.Error("serve did not end within 20 s of its stdin's end")
			_ = cmd.Process.Kill()
		}
	}()
	lines := make(chan map[string]any, 16)
	go func() {
		dec := json.NewDecoder(outPipe)
		for {
			var m map[string]any
			if dec.Decode(&m) != nil {
				close(lines)
				served <- cmd.Wait()
				return
			}
			lines <- m
		}
	}()
	n := 0
	call := func(method string, params any) map[string]any {
		t.Helper()
		n++
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for deadline := time.After(60 * time.Second); ; {
			select {
			case m, ok := <-lines:
				if !ok {
					t.Fatal("serve ended")
				}
				if id, _ := m["id"].(float64); int(id) == n {
					return m
				}
			case <-deadline:
				t.Fatalf("%s: no answer within 60 s", method)
			}
		}
	}
	text := func(m map[string]any) string {
		b, _ := json.Marshal(m["result"])
		return string(b)
	}
	call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "wine", "version": "1"}})
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	_, _ = in.Write(append(b, '\n'))
	if r := call("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{"command": `echo "fg line" & exit 4`}}); !strings.Contains(text(r), `\"fg line\"`) || !strings.Contains(text(r), "exit code 4") {
		t.Errorf("a foreground call: %s", text(r))
	}
	r := call("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{
		"command": `echo served-line & ping -n 600 127.0.0.11 >nul`, "run_in_background": true}})
	if !strings.Contains(text(r), "started shell") {
		t.Fatalf("bash run_in_background: %s", text(r))
	}
	m := ps(t, state, dir)[""]
	if m.Pid == 0 || m.Status != "running" {
		t.Fatalf("ps of the served shell: %+v", m)
	}
	waitFor(t, 20*time.Second, "bash_output with the line", func() bool {
		return strings.Contains(text(call("tools/call", map[string]any{"name": "bash_output", "arguments": map[string]any{"bash_id": m.ID}})), "served-line")
	})
	if r := call("tools/call", map[string]any{"name": "kill_shell", "arguments": map[string]any{"shell_id": m.ID, "signal": "TERM"}}); !strings.Contains(text(r), "no graceful signal") {
		t.Errorf("kill_shell with TERM: %s", text(r))
	}
	if r := call("tools/call", map[string]any{"name": "kill_shell", "arguments": map[string]any{"shell_id": m.ID}}); !strings.Contains(text(r), "killed") {
		t.Errorf("kill_shell: %s", text(r))
	}
	if alive(m.Pid) {
		t.Errorf("the served shell's command (pid %d) still runs", m.Pid)
	}

	// The server's end ends the shells it started (its session is its own).
	r = call("tools/call", map[string]any{"name": "bash", "arguments": map[string]any{
		"command": "ping -n 600 127.0.0.12", "run_in_background": true, "name": "left"}})
	if !strings.Contains(text(r), "started shell") {
		t.Fatalf("bash run_in_background: %s", text(r))
	}
	left := ps(t, state, dir)["left"]
	in.Close()
	waitFor(t, 30*time.Second, "the server's shell ended with it", func() bool {
		return !alive(left.Pid) && ps(t, state, dir)["left"].StatusLine == "killed (session ended)"
	})
}
