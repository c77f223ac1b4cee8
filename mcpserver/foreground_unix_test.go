//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// gate is a command line that waits until the test creates the file
// name in the working directory (the test's signal to go on).
func gate(name string) string {
	return fmt.Sprintf("while [ ! -e %s ]; do sleep 0.02; done", name)
}

// open creates the file a gate waits for.
func (ts *testServer) open(name string) {
	ts.t.Helper()
	if err := os.WriteFile(filepath.Join(ts.dir, name), nil, 0o644); err != nil {
		ts.t.Fatal(err)
	}
}

// pidFile waits for a command to write its pid to name in the working
// directory, and returns it.
func (ts *testServer) pidFile(name string) int {
	ts.t.Helper()
	var pid int
	waitFor(ts.t, "the command to write "+name, func() bool {
		b, err := os.ReadFile(filepath.Join(ts.dir, name))
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// TestForegroundCut checks that a foreground call returns the last
// 30,000 characters, saying how many were cut.
func TestForegroundCut(t *testing.T) {
	c := connect(t, clientOptions{})
	got, isErr := c.call("bash", map[string]any{"command": "head -c 50000 /dev/zero | tr '\\0' x; printf END"})
	var cut, kept int
	if _, err := fmt.Sscanf(got, "[%d characters cut from the start; the last %d follow; a foreground call keeps no log: run the command with run_in_background to keep all of its output]\n", &cut, &kept); err != nil || isErr || cut+kept != 50003 || kept > maxToolOutput || kept < maxToolOutput-200 {
		t.Fatalf("long output starts %.100q (error %v), want the cut and kept characters of 50003", got, isErr)
	}
	body := got[strings.IndexByte(got, '\n')+1:]
	want := strings.Repeat("x", kept-3) + "END\nexit code 0"
	if body != want {
		t.Errorf("long output: %d characters ending %q, want %d ending %q", len(body), body[max(0, len(body)-20):], len(want), want[len(want)-20:])
	}
	// Lines: the cut ends at a line's end.
	got, isErr = c.call("bash", map[string]any{"command": "seq 1 20000"})
	if _, err := fmt.Sscanf(got, "[%d characters cut from the start; the last %d follow; a foreground call keeps no log: run the command with run_in_background to keep all of its output]\n", &cut, &kept); err != nil || isErr {
		t.Fatalf("seq output starts %.100q (error %v)", got, isErr)
	}
	if first := strings.Split(got, "\n")[1]; first == "" || !strings.HasSuffix(got, "\n20000\nexit code 0") {
		t.Errorf("seq output: first kept line %q, end %q", first, got[len(got)-30:])
	} else if n, err := strconv.Atoi(first); err != nil || n < 2 || strings.Count(got, "\n") != 20002-n {
		t.Errorf("seq output: first kept line %q is not a whole line (%d lines)", first, strings.Count(got, "\n"))
	}
	// Exactly the bound: nothing is cut.
	got, _ = c.call("bash", map[string]any{"command": fmt.Sprintf("head -c %d /dev/zero | tr '\\0' y", maxToolOutput)})
	if got != strings.Repeat("y", maxToolOutput)+"\nexit code 0" {
		t.Errorf("output of exactly %d characters: %.80q…", maxToolOutput, got)
	}
}

// TestForegroundTimeout checks that a command past its timeout is
// stopped with TERM, and says so.
func TestForegroundTimeout(t *testing.T) {
	c := connect(t, clientOptions{})
	got, isErr := c.call("bash", map[string]any{"command": "echo started; echo $$ > fg.pid; exec sleep 600", "timeout": 0.5})
	if isErr || !strings.HasPrefix(got, "started\n") || !strings.Contains(got, "timed out after 500ms; stopping the command") ||
		!strings.HasSuffix(got, "\nexit code 143") {
		t.Errorf("timed out call: %q (error %v), want the timeout told and exit code 143", got, isErr)
	}
	if pid := c.pidFile("fg.pid"); alive(pid) {
		t.Errorf("the timed-out command (pid %d) still runs", pid)
	}
}

// TestForegroundProgress checks the progress notifications of a call
// that carries a progress token: the token, the time so far and the last
// line of output; both when the client can be asked (the call runs
// across round trips) and when it cannot.
func TestForegroundProgress(t *testing.T) {
	for _, elicit := range []bool{false, true} {
		t.Run(fmt.Sprintf("elicit=%v", elicit), func(t *testing.T) {
			c := connect(t, clientOptions{elicit: elicit})
			type answer struct {
				r   *mcp.CallToolResult
				err error
			}
			done := make(chan answer, 1)
			go func() {
				p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{
					"command": "echo first; printf 'step \\033[31mtwo\\n\\n'; " + gate("go") + "; echo finished"}}
				p.SetProgressToken("tok-1")
				r, err := c.cs.CallTool(context.Background(), p)
				done <- answer{r, err}
			}()
			var seen *mcp.ProgressNotificationParams
			for seen == nil {
				select {
				case p := <-c.progress:
					if strings.Contains(p.Message, "step") {
						seen = p
					}
				case a := <-done:
					t.Fatalf("the call ended before any progress was told: %v %v", a.r, a.err)
				}
			}
			if seen.ProgressToken != "tok-1" || !strings.HasPrefix(seen.Message, "running for ") ||
				!strings.HasSuffix(seen.Message, `s: step two`) || seen.Progress < 1 {
				t.Errorf("progress %+v, want token tok-1, the seconds and the last line made visible", seen)
			}
			c.open("go")
			a := <-done
			if a.err != nil || a.r.IsError || text(a.r) != "first\nstep two\n\nfinished\nexit code 0" {
				t.Errorf("the call's answer: %v %q", a.err, text(a.r))
			}
		})
	}
}

// TestForegroundCancel checks that a call the client cancels stops its
// command, and that the server goes on: when the client can be asked and
// when it cannot, and in both protocol generations.
func TestForegroundCancel(t *testing.T) {
	for _, co := range []clientOptions{{}, {elicit: true}, {version: "2025-06-18", elicit: true}} {
		t.Run(fmt.Sprintf("elicit=%v,version=%q", co.elicit, co.version), func(t *testing.T) {
			c := connect(t, co)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo $$ > fg.pid; exec sleep 600"}})
				done <- err
			}()
			pid := c.pidFile("fg.pid")
			if !alive(pid) {
				t.Fatalf("the command (pid %d) does not run", pid)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			waitFor(t, fmt.Sprintf("the cancelled command (pid %d) to end", pid), func() bool { return !alive(pid) })
			if got, isErr := c.call("bash", map[string]any{"command": "echo next"}); isErr || got != "next\nexit code 0" {
				t.Errorf("a call after the cancelled one: %q (error %v)", got, isErr)
			}
		})
	}
}

// TestResumeUnknown checks that a call that names a request state no run
// of the server's has is a tool error that says to run it again.
func TestResumeUnknown(t *testing.T) {
	c := connect(t, clientOptions{elicit: true})
	r, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo never"},
		RequestState: "run-41"})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(r); !r.IsError || !strings.Contains(got, `requestState "run-41"`) || !strings.Contains(got, "run it again") {
		t.Errorf("an unknown request state: %q (error %v)", got, r.IsError)
	}
}

// TestForegroundKeepsDir checks that a cd inside the working directory
// carries over to the next foreground call (and a background start),
// that leaving it is refused with a note, and that the line that tells
// the directory never shows.
func TestForegroundKeepsDir(t *testing.T) {
	c := connect(t, clientOptions{})
	if err := os.MkdirAll(filepath.Join(c.dir, "sub", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, isErr := c.call("bash", map[string]any{"command": "cd sub && echo moved"}); isErr || got != "moved\nexit code 0" {
		t.Fatalf("cd sub: %q (error %v)", got, isErr)
	}
	if got, _ := c.call("bash", map[string]any{"command": "pwd"}); got != filepath.Join(c.dir, "sub")+"\nexit code 0" {
		t.Errorf("after cd sub, pwd: %q", got)
	}
	if got, _ := c.call("bash", map[string]any{"command": "cd deeper; exit 3"}); got != "exit code 3" {
		t.Errorf("cd and exit 3: %q", got)
	}
	if got, _ := c.call("bash", map[string]any{"command": "pwd"}); got != filepath.Join(c.dir, "sub", "deeper")+"\nexit code 0" {
		t.Errorf("after cd deeper; exit 3, pwd: %q", got)
	}
	got, _ := c.call("bash", map[string]any{"command": "cd /; echo out"})
	if !strings.HasPrefix(got, "out\n[cshell: the command ended in /, outside the server's working directory; the next call starts in "+filepath.Join(c.dir, "sub", "deeper")) {
		t.Errorf("cd /: %q", got)
	}
	// A cwd argument runs there, and the call ends where it ended.
	if got, _ := c.call("bash", map[string]any{"command": "pwd; cd " + c.dir, "cwd": "sub"}); got != filepath.Join(c.dir, "sub")+"\nexit code 0" {
		t.Errorf("cwd sub: %q", got)
	}
	if got, _ := c.call("bash", map[string]any{"command": "printf 'a\\n'; pwd"}); strings.Contains(got, "__cshell_cwd_") || got != "a\n"+c.dir+"\nexit code 0" {
		t.Errorf("the directory line shows: %q", got)
	}
	// Variables do not carry over; a job sent with & is told to end.
	got, _ = c.call("bash", map[string]any{"command": "X=1; sleep 30 &"})
	if !strings.Contains(got, "jobs started with & end with this call; start a server or watcher with run_in_background") {
		t.Errorf("a & job: %q", got)
	}
	if got, _ := c.call("bash", map[string]any{"command": "echo a && echo b 2>&1"}); strings.Contains(got, "jobs started") {
		t.Errorf("&& and 2>&1 are no jobs: %q", got)
	}
	// Milliseconds for seconds are refused, in the foreground only.
	if got, isErr := c.call("bash", map[string]any{"command": "true", "timeout": 30000}); !isErr || !strings.Contains(got, "timeout 30000: timeout is in seconds, not milliseconds") {
		t.Errorf("timeout 30000: %q (error %v)", got, isErr)
	}
	if got, isErr := c.call("bash", map[string]any{"command": "true", "timeout": 999}); isErr || got != "exit code 0" {
		t.Errorf("timeout 999: %q (error %v)", got, isErr)
	}
}
