//go:build unix

package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// meta is a shell's record, failing the test when there is none.
func (ts *testServer) meta(id string) *shells.Meta {
	ts.t.Helper()
	m, err := ts.m.Find(id)
	if err != nil {
		ts.t.Fatal(err)
	}
	return m
}

// readUntil calls bash_output (waiting) until the output read holds
// want, and returns everything read.
func (c *sdkClient) readUntil(id, want string) string {
	c.t.Helper()
	var got strings.Builder
	for deadline := time.Now().Add(patience); !strings.Contains(got.String(), want); {
		if time.Now().After(deadline) {
			c.t.Fatalf("bash_output %s never showed %q: %q", id, want, got.String())
		}
		out, isErr := c.call("bash_output", map[string]any{"bash_id": id, "wait_seconds": 5})
		if isErr {
			c.t.Fatalf("bash_output %s: %q", id, out)
		}
		got.WriteString(out)
	}
	return got.String()
}

var startedRE = regexp.MustCompile(`^started shell (\d+) \(pid (\d+)\)\n`)

// TestBackground plays a background shell's life: the started text, its
// output, list_shells, a name taken, kill_shell and its end.
func TestBackground(t *testing.T) {
	c := connect(t, clientOptions{})
	got, isErr := c.call("bash", map[string]any{"command": "echo hello-bg; " + gate("go") + "; echo after-gate; sleep 600",
		"run_in_background": true, "name": "web", "description": "a \x1b[31mtest"})
	m := startedRE.FindStringSubmatch(got)
	if isErr || m == nil || m[1] != "1" {
		t.Fatalf("background bash: %q (error %v)", got, isErr)
	}
	meta := c.meta("1")
	want := fmt.Sprintf("started shell 1 (pid %d)\nname: web\nlog: %s\nread its output with bash_output {\"bash_id\": \"1\"}; stop it with kill_shell when done",
		meta.Pid, meta.Log)
	// The first line is there when the shell wrote it within the start.
	if got != want && got != strings.Replace(want, "\nread its", "\nfirst lines:\n  hello-bg\nread its", 1) || fmt.Sprint(meta.Pid) != m[2] {
		t.Errorf("started text %q, want %q", got, want)
	}
	if meta.Session != c.session || meta.Name != "web" || meta.Status != shells.StatusRunning {
		t.Errorf("shell 1: %+v", meta)
	}

	// Its output, by name.
	if out := c.readUntil("web", "hello-bg"); !strings.HasPrefix(out, "running for") {
		t.Errorf("bash_output: %q", out)
	}

	// A second shell may not take a running shell's name.
	got, isErr = c.call("bash", map[string]any{"command": "sleep 600", "run_in_background": true, "name": "web"})
	if !isErr || !strings.Contains(got, `already named "web"`) || strings.Contains(got, "--name") {
		t.Errorf("a name taken: %q (error %v)", got, isErr)
	}

	// list_shells: this server's shells, the description made visible.
	r := c.callResult(context.Background(), "list_shells", map[string]any{})
	var list ShellList
	structured(t, r, &list)
	if len(list.Shells) != 1 || list.Shells[0].ID != "1" || list.Shells[0].Name != "web" || list.Shells[0].Description != `a \x1b[31mtest` {
		t.Errorf("list_shells: %s", text(r))
	}
	// The text is a table a model reads at a glance; the JSON is in the
	// structured content.
	if tl := strings.Split(text(r), "\n"); len(tl) != 2 || !regexp.MustCompile(`^ID +NAME +STATUS +COMMAND +EXPOSED$`).MatchString(tl[0]) ||
		!regexp.MustCompile(`^1 +web +running for [0-9.]+s +echo hello-bg; .*… +-$`).MatchString(tl[1]) {
		t.Errorf("list_shells text: %q", text(r))
	}

	// Waiting for output: the call returns with what comes.
	type answer struct {
		out   string
		isErr bool
	}
	done := make(chan answer, 1)
	go func() {
		out, isErr := c.call("bash_output", map[string]any{"bash_id": "1", "wait_seconds": 60})
		done <- answer{out, isErr}
	}()
	c.open("go")
	if a := <-done; a.isErr || !strings.Contains(a.out, "after-gate") {
		t.Errorf("bash_output with wait_seconds: %q (error %v)", a.out, a.isErr)
	}

	// kill_shell by its task id's form, then again: already finished.
	got, isErr = c.call("kill_shell", map[string]any{"shell_id": "shell-1", "grace_seconds": 5})
	if isErr || !strings.HasPrefix(got, "killed 1: echo hello-bg;") {
		t.Errorf("kill_shell: %q (error %v)", got, isErr)
	}
	if meta := c.meta("1"); meta.Status != shells.StatusKilled || alive(meta.Pid) {
		t.Errorf("after kill_shell: status %s, pid %d alive %v", meta.Status, meta.Pid, alive(meta.Pid))
	}
	got, isErr = c.call("kill_shell", map[string]any{"shell_id": "1"})
	if isErr || !strings.HasPrefix(got, "shell 1 already finished: killed") {
		t.Errorf("kill_shell of a finished shell: %q (error %v)", got, isErr)
	}
	// Stopped by the model: told no notice.
	if got, _ := c.call("list_shells", map[string]any{}); strings.Contains(got, "[cshell notice]") {
		t.Errorf("a shell stopped with kill_shell was told: %q", got)
	}
	// Its name is free again.
	got, isErr = c.call("bash", map[string]any{"command": "sleep 600", "run_in_background": true, "name": "web"})
	if isErr || !strings.HasPrefix(got, "started shell 2 ") {
		t.Errorf("the name once free: %q (error %v)", got, isErr)
	}
}

// TestBackgroundEndsBeforeReady checks that a shell that ends while its
// start waits for it to be ready is answered with its end and output.
func TestBackgroundEndsBeforeReady(t *testing.T) {
	c := connect(t, clientOptions{})
	go func() {
		// The gate opens once the shell runs, while the start waits.
		for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if meta, err := c.m.Find("1"); err == nil && meta.Status == shells.StatusRunning {
				break
			}
		}
		_ = os.WriteFile(filepath.Join(c.dir, "go"), nil, 0o644)
	}()
	got, isErr := c.call("bash", map[string]any{"command": gate("go") + "; echo gone; exit 2", "run_in_background": true, "ready_log": "never"})
	meta := c.meta("1")
	// "before it was ready" also when it ended within the supervisor's
	// first moments, before the start could wait.
	want := fmt.Sprintf("shell 1 %s before it was ready\nlog: %s\ngone", meta.StatusLine, meta.Log)
	if isErr || got != want || meta.ExitCode == nil || *meta.ExitCode != 2 {
		t.Errorf("a shell that ended before it was ready: %q (error %v), want %q", got, isErr, want)
	}
}

// TestBashOutput reads a shell's output from a byte, filtered, and
// checks the structured content against the text.
func TestBashOutput(t *testing.T) {
	c := connect(t, clientOptions{})
	if got, isErr := c.call("bash", map[string]any{"command": "echo 'alpha 1'; echo 'beta 2'; printf 'alpha \\a3\\n'; echo all-written; sleep 600",
		"run_in_background": true}); isErr {
		t.Fatalf("background bash: %q", got)
	}
	c.readUntil("1", "all-written")

	r := c.callResult(context.Background(), "bash_output", map[string]any{"bash_id": "1", "from_byte": 8})
	var res shells.OutputResult
	structured(t, r, &res)
	if res.ID != "1" || res.Status != shells.StatusRunning || res.FromByte != 8 || res.Output != "beta 2\nalpha \\x073\nall-written\n" ||
		res.ToByte != 8+int64(len("beta 2\nalpha \a3\nall-written\n")) {
		t.Errorf("from_byte 8: %+v", res)
	}
	if got := text(r); got != res.StatusLine+"\nbeta 2\nalpha \\x073\nall-written\n" {
		t.Errorf("from_byte 8 text: %q", got)
	}

	got, isErr := c.call("bash_output", map[string]any{"bash_id": "1", "from_byte": 0, "filter": "^alpha"})
	if isErr || !strings.HasSuffix(got, "\nalpha 1\nalpha \\x073\n") || strings.Contains(got, "beta") {
		t.Errorf("filter ^alpha: %q (error %v)", got, isErr)
	}
	// Everything was read: nothing new.
	r = c.callResult(context.Background(), "bash_output", map[string]any{"bash_id": "1"})
	structured(t, r, &res)
	if res.Output != "" || r.IsError {
		t.Errorf("a read with nothing new: %+v", res)
	}
}

// freePort is a loopback port nothing listens on (as far as can be known).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// python is a python3 every user may run.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o001 != 0 {
			return p
		}
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: it serves the exposed port")
	}
	return p
}

// TestBackgroundReady checks ready (an exposed port served inside the
// shell) and ready_log, and a readiness that never comes: a tool error
// that names the shell, which keeps running and whose end is then told
// as a note.
func TestBackgroundReady(t *testing.T) {
	py := python(t)
	c := connect(t, clientOptions{})
	port := freePort(t)
	got, isErr := c.call("bash", map[string]any{"command": fmt.Sprintf("exec %s -m http.server %d --bind 127.0.0.1", py, port),
		"run_in_background": true, "expose": []string{fmt.Sprint(port)}, "ready": true, "ready_timeout": 120})
	if isErr || !startedRE.MatchString(got) || !strings.Contains(got, fmt.Sprintf("exposed: 127.0.0.1:%d -> %d (no relay", port, port)) ||
		!regexp.MustCompile(`\nready after \d+\.\ds\n`).MatchString(got) {
		t.Fatalf("ready: %q (error %v)", got, isErr)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatalf("the shell's server, said to be ready: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the shell's server answered %s", resp.Status)
	}

	got, isErr = c.call("bash", map[string]any{"command": "echo booting; echo 'listening on :5173'; sleep 600",
		"run_in_background": true, "ready_log": "listening on :[0-9]+$"})
	if isErr || !strings.HasPrefix(got, "started shell 2 ") || !strings.Contains(got, "\nready after ") {
		t.Errorf("ready_log: %q (error %v)", got, isErr)
	}

	got, isErr = c.call("bash", map[string]any{"command": "echo waiting; " + gate("go") + "; echo bye; exit 5",
		"run_in_background": true, "ready_log": "never-printed", "ready_timeout": 0.5})
	if !isErr || !strings.HasPrefix(got, "started shell 3 ") || !strings.Contains(got, `no line of output matches "never-printed"`) ||
		!strings.Contains(got, `bash_output {"bash_id": "3"} shows why`) {
		t.Errorf("not ready: %q (error %v)", got, isErr)
	}
	if meta := c.meta("3"); meta.Status != shells.StatusRunning {
		t.Errorf("a shell not ready in time: %s, want running", meta.StatusLine)
	}
	c.open("go")
	notice := c.awaitNotice("3")
	meta := c.meta("3")
	want := fmt.Sprintf(`shell 3 (echo waiting; %s; echo bye; exit 5) %s; exit code 5, runtime %.1fs; log: %s; last lines:`,
		gate("go"), meta.StatusLine, meta.RuntimeSeconds, meta.Log)
	if !strings.Contains(notice, want) || !strings.HasSuffix(notice, "waiting\nbye") {
		t.Errorf("the notice of shell 3: %q, want %q and its last lines", notice, want)
	}
}

// awaitNotice calls list_shells until a result carries the notice of a
// shell, and returns the notice.
func (c *sdkClient) awaitNotice(id string) string {
	c.t.Helper()
	mark := "[cshell notice] shell " + id + " "
	var got string
	waitFor(c.t, "the notice of shell "+id, func() bool {
		got, _ = c.call("list_shells", map[string]any{})
		return strings.Contains(got, mark)
	})
	return got[strings.Index(got, mark)+len("[cshell notice] "):]
}

// TestNotices checks that a shell that ends by itself is told once, with
// the next result, with its name, exit code and last lines, and as an
// MCP log message to a client that set a logging level.
func TestNotices(t *testing.T) {
	c := connect(t, clientOptions{version: "2025-06-18"})
	if err := c.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "notice"}); err != nil {
		t.Fatal(err)
	}
	if got, isErr := c.call("bash", map[string]any{"command": gate("go") + "; echo 'last words'; exit 4", "run_in_background": true, "name": "ender"}); isErr {
		t.Fatalf("background bash: %q", got)
	}
	c.open("go")
	notice := c.awaitNotice("1")
	if !strings.HasPrefix(notice, `shell 1 "ender" (`) || !strings.Contains(notice, "; exit code 4, runtime ") ||
		!strings.HasSuffix(notice, "; last lines:\nlast words") {
		t.Errorf("notice: %q", notice)
	}
	select {
	case l := <-c.logs:
		if !strings.HasPrefix(l, `shell 1 "ender"`) {
			t.Errorf("log message %q", l)
		}
	case <-time.After(patience):
		t.Errorf("no log message told the end")
	}
	// Told once.
	if got, _ := c.call("list_shells", map[string]any{}); strings.Contains(got, "[cshell notice]") {
		t.Errorf("told twice: %q", got)
	}
}

// TestOtherSessions checks that a shell of another session is no shell
// of the server's: not listed, not read, not stopped, and said in the
// words of one that never was.
func TestOtherSessions(t *testing.T) {
	c := connect(t, clientOptions{})
	st, err := c.m.Start(context.Background(), shells.RunOptions{Request: plan.Request{
		Command: []string{"sleep 600"}, Isolation: container.Process, Session: "someone-else", OwnerPid: os.Getpid(),
		FS: policy.FilesystemRequest{Home: c.home, Cwd: c.dir}, Name: "theirs"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.m.Kill(context.Background(), st.Meta.ID, 9, 0); err != nil {
			t.Error(err)
		}
	})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash_output", map[string]any{"bash_id": st.Meta.ID}, st.Meta.ID + " among this server's shells"},
		{"bash_output", map[string]any{"bash_id": "theirs"}, `named "theirs" among this server's shells`},
		{"kill_shell", map[string]any{"shell_id": st.Meta.ID}, st.Meta.ID + " among this server's shells"},
		{"kill_shell", map[string]any{"shell_id": taskPrefix + st.Meta.ID}, st.Meta.ID + " among this server's shells"},
	} {
		got, isErr := c.call(tc.tool, tc.args)
		if !isErr || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: %q (error %v), want %q", tc.tool, tc.args, got, isErr, tc.want)
		}
	}
	if got, _ := c.call("list_shells", map[string]any{}); got != "no shells" {
		t.Errorf("list_shells: %q, want no shells", got)
	}
	if meta := c.meta(st.Meta.ID); meta.Status != shells.StatusRunning {
		t.Errorf("the other session's shell: %s", meta.StatusLine)
	}
}

// TestKillSignals checks that kill_shell sends the signal asked for to
// the shell, and that grace 0 kills what ignores it at once.
func TestKillSignals(t *testing.T) {
	c := connect(t, clientOptions{})
	start := func(command string) string {
		got, isErr := c.call("bash", map[string]any{"command": command, "run_in_background": true})
		m := startedRE.FindStringSubmatch(got)
		if isErr || m == nil {
			t.Fatalf("background bash: %q", got)
		}
		return m[1]
	}
	trapped := start(`trap 'echo got-int; exit 7' INT; echo trapping; while :; do sleep 0.02; done`)
	c.readUntil(trapped, "trapping")
	if got, isErr := c.call("kill_shell", map[string]any{"shell_id": trapped, "signal": "INT"}); isErr || !strings.HasPrefix(got, "killed "+trapped+": ") {
		t.Errorf("kill_shell INT: %q (error %v)", got, isErr)
	}
	if out := c.readUntil(trapped, "got-int"); !strings.Contains(out, "got-int") {
		t.Errorf("after INT: %q", out)
	}

	stubborn := start(`trap '' TERM; echo $$ > stubborn.pid; while :; do sleep 0.02; done`)
	pid := c.pidFile("stubborn.pid")
	if got, isErr := c.call("kill_shell", map[string]any{"shell_id": stubborn, "grace_seconds": 0}); isErr || !strings.HasPrefix(got, "killed "+stubborn+": ") {
		t.Errorf("kill_shell with grace 0: %q (error %v)", got, isErr)
	}
	if meta := c.meta(stubborn); meta.Status != shells.StatusKilled || alive(pid) {
		t.Errorf("a shell that ignores TERM, after grace 0: %s, pid %d alive %v", meta.StatusLine, pid, alive(pid))
	}
}

// TestConcurrentCalls runs foreground and background calls at once.
func TestConcurrentCalls(t *testing.T) {
	c := connect(t, clientOptions{})
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			want := fmt.Sprintf("fg-%d\nexit code %d", i, i)
			if got, isErr := c.call("bash", map[string]any{"command": fmt.Sprintf("echo fg-%d; exit %d", i, i)}); isErr || got != want {
				errs <- fmt.Sprintf("foreground %d: %q", i, got)
			}
		}()
		go func() {
			defer wg.Done()
			if got, isErr := c.call("bash", map[string]any{"command": "sleep 600", "run_in_background": true}); isErr || !startedRE.MatchString(got) {
				errs <- fmt.Sprintf("background %d: %q", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	var list ShellList
	structured(t, c.callResult(context.Background(), "list_shells", map[string]any{}), &list)
	ids := map[string]bool{}
	for _, s := range list.Shells {
		ids[s.ID] = true
	}
	if len(ids) != 4 {
		t.Errorf("list_shells after 4 background calls: %v", ids)
	}
}

// TestReloadTakesShellsOver restarts the server of a session, as a host's
// reload does: the new server lists the old one's shell as its own,
// reads its output on from where the old one left off, and stops it.
func TestReloadTakesShellsOver(t *testing.T) {
	a := connect(t, clientOptions{})
	got, isErr := a.call("bash", map[string]any{"command": "echo one; " + gate("next") + "; echo two; sleep 600", "run_in_background": true})
	if isErr || !startedRE.MatchString(got) {
		t.Fatalf("background bash: %q", got)
	}
	waitFor(t, "one", func() bool {
		out, _ := a.call("bash_output", map[string]any{"bash_id": "1", "wait_seconds": 1})
		return strings.Contains(out, "one")
	})
	a.hangUp()

	b := connect(t, clientOptions{after: a.testServer})
	r := b.callResult(context.Background(), "list_shells", map[string]any{})
	var list ShellList
	structured(t, r, &list)
	if len(list.Shells) != 1 || list.Shells[0].ID != "1" || list.Shells[0].Status != shells.StatusRunning {
		t.Fatalf("the new server lists %s", text(r))
	}
	b.open("next")
	var out string
	waitFor(t, "two", func() bool {
		o, _ := b.call("bash_output", map[string]any{"bash_id": "shell-1", "wait_seconds": 1})
		out += o
		return strings.Contains(out, "two")
	})
	if strings.Contains(out, "one") {
		t.Errorf("the new server read again what the old one had read: %q", out)
	}
	if got, isErr := b.call("kill_shell", map[string]any{"shell_id": "1", "grace_seconds": 0}); isErr || !strings.HasPrefix(got, "killed 1") {
		t.Errorf("kill_shell on the new server: %q (error %v)", got, isErr)
	}
}
