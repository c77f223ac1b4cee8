//go:build e2e

package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"
)

// run -d --ready on a terminal says what it waits for, with the shell's
// id, while it waits; Ctrl-C then stops the shell and says so: nothing
// is left running that the user was not told of.
func TestReadyWaitOnATerminal(t *testing.T) {
	requireLinux(t)
	master, slave, err := console.NewPty()
	if err != nil {
		t.Fatalf("no pty: %v", err)
	}
	defer master.Close()
	f, err := os.OpenFile(slave, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	state := t.TempDir()
	marker := fmt.Sprintf("%d", 560000+os.Getpid()%10000)
	port := freePort(t)
	cmd := exec.Command(cshellBin, "--state-dir", state, "run", "-d", "--expose", fmt.Sprint(port), "--ready", "--ready-timeout", "60s", "--", "sleep "+marker)
	cmd.Dir = t.TempDir()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = f, f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := newLineReader(master)
	out.waitFor(t, fmt.Sprintf("waiting up to 1m0s until port %d accepts connections inside it (Ctrl-C stops the shell)", port), 10*time.Second)
	if !strings.Contains(out.text(), "cshell: shell 1 started") {
		t.Errorf("the id is not told before the wait: %q", out.text())
	}
	waitCount(t, "sleep "+marker, 1, 5*time.Second)
	if _, err := master.Write([]byte{3}); err != nil { // ^C: the terminal sends SIGINT
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("cshell did not stop at ^C: %q", out.text())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit code %d, want 130", code)
	}
	out.waitFor(t, "interrupted while waiting for shell 1 to be ready; stopped it", 5*time.Second)
	waitGone(t, "sleep "+marker, 5*time.Second)
}

// ps shows a SESSION column when shells of several sessions are listed,
// takes --session and -q; kill takes several ids; kill all says when
// other sessions still run shells; completions offer ids and names.
func TestPsSessionsAndKillSeveral(t *testing.T) {
	requireLinux(t)
	state := t.TempDir()
	cs := func(args ...string) result {
		return run(t, call{args: append([]string{"--state-dir", state}, args...), dir: t.TempDir()})
	}
	t.Cleanup(func() {
		cs("kill", "all", "--session", "a", "--grace", "0")
		cs("kill", "all", "--session", "b", "--grace", "0")
	})
	for _, s := range []string{"a", "b", "b"} {
		if r := cs("run", "-d", "--session", s, "--name", "web-"+s+fmt.Sprint(time.Now().UnixNano()%1000), "--", "sleep 60"); r.code != 0 {
			t.Fatalf("run -d: %d %q", r.code, r.stderr)
		}
	}
	r := cs("ps")
	if !strings.HasPrefix(r.stdout, "ID  SESSION") {
		t.Errorf("ps with two sessions: no SESSION column: %q", r.stdout)
	}
	if r := cs("ps", "--session", "a"); strings.Contains(r.stdout, "SESSION") || strings.Count(r.stdout, "\n") != 2 {
		t.Errorf("ps --session a: %q", r.stdout)
	}
	if r := cs("ps", "-q", "--session", "b"); r.stdout != "2\n3\n" {
		t.Errorf("ps -q --session b: %q", r.stdout)
	}
	comp := cs("__complete", "kill", "")
	for _, w := range []string{"1\t", "2\t", "all\t", "web-a"} {
		if !strings.Contains(comp.stdout, w) {
			t.Errorf("kill's completion lacks %q: %q", w, comp.stdout)
		}
	}
	if comp := cs("__complete", "run", "--isolation", ""); !strings.Contains(comp.stdout, "container") || !strings.Contains(comp.stdout, "process") {
		t.Errorf("--isolation's completion: %q", comp.stdout)
	}
	if comp := cs("__complete", "kill", "1", "--signal", ""); !strings.Contains(comp.stdout, "TERM") || !strings.Contains(comp.stdout, "KILL") {
		t.Errorf("--signal's completion: %q", comp.stdout)
	}
	r = cs("kill", "all", "--session", "a", "--grace", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "killed 1") || !strings.Contains(r.stderr, "2 shell(s) of other sessions still run") {
		t.Errorf("kill all --session a: %d %q %q", r.code, r.stdout, r.stderr)
	}
	r = cs("kill", "2", "3", "99", "--grace", "0")
	if r.code != 1 || !strings.Contains(r.stdout, "killed 2") || !strings.Contains(r.stdout, "killed 3") || !strings.Contains(r.stderr, "no such shell 99") {
		t.Errorf("kill 2 3 99: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := cs("kill", "2", "all"); r.code != 2 {
		t.Errorf("kill 2 all: %d %q", r.code, r.stderr)
	}
}

// What a newcomer meets in an hour at the terminal, each one sentence.
func TestNewcomerSentences(t *testing.T) {
	requireLinux(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"xyzzy"}, 2, `cshell: unknown command "xyzzy"; see cshell --help`},
		{[]string{"klil", "3"}, 2, `cshell: unknown command "klil"; did you mean kill? see cshell --help`},
		{[]string{"run", "--memory", "1m", "--", "true"}, 2, `cshell: --memory "1m": 1 MiB is below the smallest size cshell takes, 4 MiB (4m)`},
	} {
		r := run(t, call{args: c.args, dir: t.TempDir()})
		if r.code != c.code || strings.TrimSpace(r.stderr) != c.want {
			t.Errorf("%v: code %d, stderr %q; want %d, %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if r := run(t, call{args: []string{"doctor"}}); strings.Contains(r.stdout, "FAIL cgroup delegation") || !strings.Contains(r.stdout, "ok   caches:") {
		t.Errorf("doctor: %q", r.stdout)
	}
	if os.Geteuid() != 0 {
		// A working directory this user may not enter is named as such,
		// not as its project file.
		r := run(t, call{args: []string{"run", "-w", "/root", "--", "true"}, dir: t.TempDir()})
		if r.code != 2 || strings.TrimSpace(r.stderr) != "cshell: -w /root: this user may not enter it (permission denied); give a working directory you may use" {
			t.Errorf("-w /root: %d %q", r.code, r.stderr)
		}
		state := t.TempDir() + "/state"
		if err := os.Mkdir(state, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(state, 0o700)
		r = run(t, call{args: []string{"--state-dir", state, "ps"}})
		if r.code != 1 || !strings.Contains(r.stderr, "cannot be opened: permission denied; give it back to this user") {
			t.Errorf("an unreadable state dir: %d %q", r.code, r.stderr)
		}
	}
}
