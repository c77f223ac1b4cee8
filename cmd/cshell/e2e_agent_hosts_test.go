//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Agent hosts that nobody on the project wrote: the npm TypeScript SDK's
// client reloading its server, the MCP Inspector's CLI, a model's view of
// refusals and first lines.

// TestServeReloadKeepsShells plays a host's reload with the npm client: a
// dev server started in the background stays reachable while the host's
// server is gone and after a new one of the same session took it over,
// which lists it, reads its output on without a gap, answers for its
// task, and stops it.
func TestServeReloadKeepsShells(t *testing.T) {
	port := freePort(t)
	session := fmt.Sprintf("reload-%d", os.Getpid())
	server := fmt.Sprintf("exec python3 -u -m http.server %d --bind 127.0.0.1", port)
	events, state := runTSEnv(t, []string{"CSHELL_SERVE_ARGS=--session " + session}, "reload", server, fmt.Sprint(port))
	t.Cleanup(func() {
		_ = exec.Command(cshellBin, "--state-dir", state, "kill", "--session", session, "--grace", "0", "all").Run()
		waitSupervisors(t, state)
	})
	started := one(t, events, "started")
	text, _ := started["text"].(string)
	if started["isError"] != false || !strings.HasPrefix(text, "started shell 1 (pid ") ||
		!regexp.MustCompile(`(?m)^first lines:\n  Serving HTTP on 127\.0\.0\.1 port \d+`).MatchString(text) {
		t.Errorf("started: %q", text)
	}
	if st, _ := started["structured"].(map[string]any); st == nil || st["id"] != "1" || !strings.Contains(fmt.Sprint(st["first_lines"]), "Serving HTTP") {
		t.Errorf("started, structured: %v", started["structured"])
	}
	fetched := map[string]any{}
	for _, e := range eventsNamed(events, "fetch") {
		fetched[e["when"].(string)] = e["status"]
	}
	for _, when := range []string{"before", "between", "after"} {
		if fmt.Sprint(fetched[when]) != "200" {
			t.Errorf("the dev server %s the reload: %v", when, fetched[when])
		}
	}
	if fmt.Sprint(fetched["killed"]) == "200" {
		t.Errorf("the dev server still answers after kill_shell")
	}
	ps := one(t, events, "ps")["shells"].([]any)
	if len(ps) != 1 {
		t.Fatalf("ps between the servers: %v", ps)
	}
	between := ps[0].(map[string]any)
	if between["status"] != "running" || between["orphaned_until"] == nil ||
		!strings.HasPrefix(fmt.Sprint(between["status_line"]), "orphaned: its server ended; it ends in ") {
		t.Errorf("ps between the servers: %v", between)
	}
	list := one(t, events, "list")
	if !regexp.MustCompile(`(?m)^1 +- +running for [0-9.]+s +exec python3 -u -m http\.server`).MatchString(fmt.Sprint(list["text"])) {
		t.Errorf("list_shells on the new server: %q", list["text"])
	}
	// The requests made while no server ran are in the output the new
	// server reads on with: nothing lost, nothing read twice.
	var before, after string
	for _, e := range eventsNamed(events, "output") {
		if e["when"] == "before" {
			before = e["text"].(string)
		} else {
			after = e["text"].(string)
		}
	}
	if strings.Count(before, `"GET / HTTP/1.1" 200`) != 1 || strings.Count(after, `"GET / HTTP/1.1" 200`) != 2 || strings.Contains(after, "Serving HTTP") {
		t.Errorf("output before the reload %q, after %q", before, after)
	}
	if task := one(t, events, "task"); task["status"] != "working" || !strings.HasPrefix(fmt.Sprint(task["statusMessage"]), "shell 1: running for") {
		t.Errorf("the old task id on the new server: %v", task)
	}
	if killed := one(t, events, "killed"); killed["isError"] != false || !strings.HasPrefix(fmt.Sprint(killed["text"]), "killed 1") {
		t.Errorf("kill_shell on the new server: %v", killed)
	}
}

// TestServeReloadWindowEnds checks that a shell nobody takes over ends as
// its session's once shells.reattachSeconds pass.
func TestServeReloadWindowEnds(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"shells": {"reattachSeconds": 1}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := fmt.Sprintf("%d", 610000+os.Getpid()%10000)
	c := startServe(t, cfg, "--session", "window")
	if got, isErr := c.call("bash", map[string]any{"command": "sleep " + marker, "run_in_background": true}); isErr {
		t.Fatalf("background: %q", got)
	}
	c.cs.Close()
	waitGone(t, "sleep "+marker, 20*time.Second)
	out, err := exec.Command(cshellBin, "--state-dir", c.state, "ps", "--all", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var list []map[string]any
	if json.Unmarshal(out, &list) != nil || len(list) != 1 || list[0]["status_line"] != "killed (session ended)" {
		t.Errorf("after the window: %s", out)
	}
}

// inspector is the MCP Inspector's CLI, installed beside the npm client.
func inspector(t *testing.T) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(tsClient(t)), "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the MCP Inspector CLI is not installed beside the npm client (%v): hack/test.sh installs it", err)
	}
	return p
}

// TestServeInspector drives the server with the MCP Inspector's CLI,
// which fills in arguments by their schema's type: expose, from_byte and
// grace_seconds pass. Each call is a server of its own, of one session:
// the shell the first started is taken over by the next.
func TestServeInspector(t *testing.T) {
	insp := inspector(t)
	state, dir := t.TempDir(), t.TempDir()
	session := fmt.Sprintf("inspector-%d", os.Getpid())
	port := freePort(t)
	t.Cleanup(func() {
		_ = exec.Command(cshellBin, "--state-dir", state, "kill", "--session", session, "--grace", "0", "all").Run()
		waitSupervisors(t, state)
	})
	call := func(tool string, args ...string) (string, bool) {
		t.Helper()
		cmdArgs := []string{insp, cshellBin, "--state-dir", state, "serve", "--session", session, "--method", "tools/call", "--tool-name", tool}
		for _, a := range args {
			cmdArgs = append(cmdArgs, "--tool-arg", a)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", cmdArgs...)
		cmd.Dir = dir
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspector %s: %v\n%s", tool, err, out)
		}
		var r struct {
			Content []struct{ Text string }
			IsError bool
		}
		if err := json.Unmarshal(out, &r); err != nil || len(r.Content) == 0 {
			t.Fatalf("inspector %s printed %s", tool, out)
		}
		return r.Content[0].Text, r.IsError
	}
	got, isErr := call("bash", fmt.Sprintf("command=exec python3 -u -m http.server %d --bind 127.0.0.1", port),
		"run_in_background=true", fmt.Sprintf("expose=%d", port), "ready=true", "ready_timeout=30")
	if isErr || !strings.HasPrefix(got, "started shell 1 (pid ") || !strings.Contains(got, fmt.Sprintf("exposed: 127.0.0.1:%d -> %d", port, port)) {
		t.Fatalf("bash with expose: %q (error %v)", got, isErr)
	}
	got, isErr = call("bash_output", "bash_id=1", "from_byte=0")
	if isErr || !strings.Contains(got, "Serving HTTP on 127.0.0.1") {
		t.Errorf("bash_output with from_byte: %q (error %v)", got, isErr)
	}
	got, isErr = call("kill_shell", "shell_id=1", "grace_seconds=1")
	if isErr || !strings.HasPrefix(got, "killed 1") {
		t.Errorf("kill_shell with grace_seconds: %q (error %v)", got, isErr)
	}
	// A missing argument is one sentence that names it.
	got, isErr = call("bash_output")
	if !isErr || got != `bash_output needs the argument "bash_id": the shell id (or name, or the id of its task) that bash returned` {
		t.Errorf("bash_output without bash_id: %q (error %v)", got, isErr)
	}
}

// TestServeRefusedHostAsksTheUser checks what a model reads of a refused
// host: the command its user runs to allow it, never a flag.
func TestServeRefusedHostAsksTheUser(t *testing.T) {
	c := startServe(t, "", "--session", "hint")
	got, _ := c.call("bash", map[string]any{"command": "curl -sS -o /dev/null http://blocked.test/ 2>&1; true"})
	want := "refused GET blocked.test:80 (not in the allow list); if the task needs it, ask the user to allow it by running: cshell allow --session hint blocked.test"
	if !strings.Contains(got, want) || strings.Contains(got, "--allow-host") {
		t.Errorf("a refused host: %q, want %q", got, want)
	}
}

// TestRunDetachedFirstLines checks run -d's first lines, in text and JSON,
// with the terminal's sequences taken out.
func TestRunDetachedFirstLines(t *testing.T) {
	e := newBG(t)
	r := e.cs("run", "-d", "--ready-log", "listening", "--", "sh", "-c", `printf '\033[32mVITE\033[0m ready\n  Local: http://127.0.0.1:5173/\nlistening\n'; sleep 30`)
	if r.code != 0 || !strings.Contains(r.stdout, "\nfirst lines:\n  VITE ready\n    Local: http://127.0.0.1:5173/\n  listening\n") {
		t.Errorf("run -d: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r = e.cs("--json", "run", "-d", "--ready-log", "up", "--", "sh", "-c", "echo up; sleep 30")
	var a struct {
		FirstLines []string `json:"first_lines"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &a); err != nil || fmt.Sprint(a.FirstLines) != "[up]" {
		t.Errorf("run -d --json: %q %q", r.stdout, r.stderr)
	}
}

// TestNoHome runs cshell as an arbitrary uid in a CI container does: HOME
// is / (or missing), so the state dir goes to a folder of the user's in
// TMPDIR, and everything works there.
func TestNoHome(t *testing.T) {
	tmp := t.TempDir()
	env := []string{"HOME=/", "XDG_STATE_HOME=", "XDG_RUNTIME_DIR=", "XDG_CONFIG_HOME=", "XDG_CACHE_HOME=", "CSHELL_STATE_DIR=", "TMPDIR=" + tmp}
	_, errBefore := os.Lstat("/.config")
	state := filepath.Join(tmp, fmt.Sprintf("cshell-state-%d", os.Geteuid()))
	cs := func(args ...string) result {
		t.Helper()
		return run(t, call{args: args, dir: tmp, env: env})
	}
	r := cs("run", "-d", "--", "sleep 30")
	if r.code != 0 || !strings.Contains(r.stdout, "log: "+filepath.Join(state, "shells", "1", "output.log")) {
		t.Fatalf("run -d without a home: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	t.Cleanup(func() { cs("kill", "--grace", "0", "all") })
	if r := cs("ps", "-q"); r.code != 0 || strings.TrimSpace(r.stdout) != "1" {
		t.Errorf("ps without a home: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if st, err := os.Stat(state); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the state dir: %v %v", st, err)
	}
	if r := cs("run", "--", "echo", "fine"); r.code != 0 || r.stdout != "fine\n" {
		t.Errorf("a foreground run without a home: code %d, %q %q", r.code, r.stdout, r.stderr)
	}
	// No global configuration without a home: nothing made in / for one.
	if _, err := os.Lstat("/.config"); err == nil && errBefore != nil {
		t.Errorf("cshell made /.config for a home of /")
		_ = os.RemoveAll("/.config")
	}
}

// TestServeTextsForAModel plays what a model meets through the npm client:
// the directory a call ended in is the next call's, milliseconds given
// for seconds are refused, a & job is told to end with its call, a
// missing argument is one sentence, and colours never reach it.
func TestServeTextsForAModel(t *testing.T) {
	events, _ := runTS(t, "texts")
	ev := func(name string) (string, bool) {
		e := one(t, events, name)
		return fmt.Sprint(e["text"]), e["isError"] == true
	}
	if got, isErr := ev("cd"); isErr || got != "moved\nexit code 0" {
		t.Errorf("cd sub: %q", got)
	}
	if got, _ := ev("pwd"); !strings.HasSuffix(got, "/sub\nexit code 0") {
		t.Errorf("pwd after cd sub: %q", got)
	}
	if got, isErr := ev("millis"); !isErr || !strings.HasPrefix(got, "timeout 30000: timeout is in seconds, not milliseconds") {
		t.Errorf("timeout 30000: %q", got)
	}
	if got, _ := ev("job"); !strings.Contains(got, "[cshell: jobs started with & end with this call; start a server or watcher with run_in_background instead]") {
		t.Errorf("a & job: %q", got)
	}
	if got, isErr := ev("missing"); !isErr || !strings.HasPrefix(got, `bash needs the argument "command": `) {
		t.Errorf("no command: %q", got)
	}
	if got, _ := ev("colour"); got != "red plain\nexit code 0" {
		t.Errorf("colours: %q", got)
	}
}
