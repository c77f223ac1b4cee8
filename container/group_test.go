//go:build linux

package container

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cshell/cshell/policy"
)

// startGroup starts a process-group shell with its output in a buffer
// (not a file: the runner copies it, as it does for an MCP call).
func startGroup(t *testing.T, command string, out *syncBuffer) Shell {
	t.Helper()
	sh, err := processRunner{}.Start(&Spec{
		Command: command, Env: []string{"PATH=/usr/bin:/bin"},
		FS: policy.Filesystem{Workdir: t.TempDir()}, Stdout: out, Stderr: out,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Kill(); sh.Wait() })
	return sh
}

func TestProcessRunnerRunsAndMarks(t *testing.T) {
	var out syncBuffer
	sh := startGroup(t, `echo "$CSHELL_SHELL"; pwd; exit 3`, &out)
	ex, err := sh.Wait()
	if err != nil || ex.Code != 3 {
		t.Fatalf("exit %+v %v", ex, err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || lines[0] != ShellToken(sh) || len(lines[0]) != 24 {
		t.Errorf("output %q, token %q", out.String(), ShellToken(sh))
	}
}

func TestProcessRunnerSignalsTheGroup(t *testing.T) {
	var out syncBuffer
	sh := startGroup(t, `trap 'echo got TERM; exit 7' TERM; sleep 30 & wait`, &out)
	time.Sleep(200 * time.Millisecond)
	if err := sh.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ex, _ := sh.Wait()
	if ex.Code != 7 || !strings.Contains(out.String(), "got TERM") {
		t.Errorf("exit %+v output %q", ex, out.String())
	}
}

// TestProcessRunnerEndsWhatItLeft starts a daemon that leaves the process
// group and holds the output: Wait still returns, kills it, and names it.
func TestProcessRunnerEndsWhatItLeft(t *testing.T) {
	var out syncBuffer
	marker := fmt.Sprint(800000 + os.Getpid()%10000)
	sh := startGroup(t, "setsid sleep "+marker+" & sleep "+marker+" & echo started", &out)
	done := make(chan Exit, 1)
	go func() { ex, _ := sh.Wait(); done <- ex }()
	var ex Exit
	select {
	case ex = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return while a daemon held the output")
	}
	if len(ex.Escaped) != 1 {
		t.Errorf("escaped %v, want the setsid'd daemon", ex.Escaped)
	}
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if !running("sleep " + marker) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("sleep %s still runs after the shell ended", marker)
}

// running reports whether a process of ours runs with this command line.
func running(cmdline string) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})) == cmdline {
			st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if s := string(st); !strings.Contains(s[strings.LastIndexByte(s, ')')+1:], " Z ") {
				return true
			}
		}
	}
	return false
}

func TestSweepTouchesOnlyItsToken(t *testing.T) {
	var out syncBuffer
	marker := fmt.Sprint(810000 + os.Getpid()%10000)
	sh := startGroup(t, "sleep "+marker, &out)
	time.Sleep(100 * time.Millisecond)
	if got := Sweep("not-"+ShellToken(sh), 0); got != nil || !running("sleep "+marker) {
		t.Errorf("a sweep of another token killed %v", got)
	}
	if got := Sweep("", 0); got != nil {
		t.Errorf("an empty token swept %v", got)
	}
	Sweep(ShellToken(sh), 0)
	if ex, _ := sh.Wait(); ex.Signal != syscall.SIGKILL {
		t.Errorf("after its sweep: %+v", ex)
	}
}
