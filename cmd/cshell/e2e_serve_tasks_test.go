//go:build e2e

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---- The npm TypeScript SDK's client (2025-11-25, its tasks included) ----

// tsClient is cmd/cshell/testdata/mcpclient/client.mjs, which hack/test.sh
// installs with its npm packages and names in CSHELL_MCP_CLIENT.
func tsClient(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CSHELL_MCP_CLIENT")
	if p == "" {
		t.Skip("CSHELL_MCP_CLIENT is not set: hack/test.sh installs the npm MCP SDK client (cmd/cshell/testdata/mcpclient) and sets it")
	}
	return p
}

type tsEvent map[string]any

// runTS plays one scenario of the npm client against a server of its
// own, and returns what it printed and the server's state dir.
func runTS(t *testing.T, scenario string, args ...string) ([]tsEvent, string) {
	return runTSEnv(t, nil, scenario, args...)
}

// runTSEnv is runTS with more of the client's environment.
func runTSEnv(t *testing.T, env []string, scenario string, args ...string) ([]tsEvent, string) {
	t.Helper()
	script := tsClient(t)
	state := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script, scenario, cshellBin}, args...)...)
	cmd.Env = append(append(os.Environ(), "CSHELL_STATE="+state, "CSHELL_WORKDIR="+t.TempDir()), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	waitSupervisors(t, state)
	if err != nil {
		t.Fatalf("node client %s: %v\n%s", scenario, err, out)
	}
	var events []tsEvent
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e tsEvent
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("node client printed %q", l)
		}
		if e["event"] == "error" && scenario != "task-kill" && scenario != "task-cancel" {
			t.Errorf("node client %s: %v", scenario, e["message"])
		}
		events = append(events, e)
	}
	return events, state
}

func eventsNamed(events []tsEvent, name string) []tsEvent {
	var out []tsEvent
	for _, e := range events {
		if e["event"] == name {
			out = append(out, e)
		}
	}
	return out
}

func one(t *testing.T, events []tsEvent, name string) tsEvent {
	t.Helper()
	got := eventsNamed(events, name)
	if len(got) != 1 {
		t.Fatalf("%d %q events in %v", len(got), name, events)
	}
	return got[0]
}

// noNotice checks that the state dir holds no completion notice of shell id.
func noNotice(t *testing.T, state, id string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(state, "notices.jsonl"))
	if strings.Contains(string(b), fmt.Sprintf(`"id":%q`, id)) {
		t.Errorf("a notice for shell %s, which the model stopped: %s", id, b)
	}
}

func TestServeTSClientTools(t *testing.T) {
	marker := fmt.Sprintf("%d", 530000+os.Getpid()%10000)
	events, _ := runTS(t, "tools", "sleep "+marker)
	if caps := fmt.Sprint(one(t, events, "connected")["tasks"]); !strings.Contains(caps, "call:map[]") {
		t.Errorf("the 2025-11-25 task capability: %s", caps)
	}
	tools := one(t, events, "tools")["tools"].([]any)
	if len(tools) != 4 {
		t.Fatalf("tools: %v", tools)
	}
	for _, raw := range tools {
		tool := raw.(map[string]any)
		name := tool["name"].(string)
		ann, _ := tool["annotations"].(map[string]any)
		readOnly := name == "bash_output" || name == "list_shells"
		if tool["title"] == nil || ann == nil || ann["readOnlyHint"] != readOnly {
			t.Errorf("%s: title %v, annotations %v", name, tool["title"], ann)
		}
		if name == "kill_shell" && ann["destructiveHint"] != true {
			t.Errorf("kill_shell is not marked destructive: %v", ann)
		}
		if (tool["outputSchema"] != nil) != readOnly {
			t.Errorf("%s: output schema %v", name, tool["outputSchema"])
		}
		if exec := fmt.Sprint(tool["execution"]); (name == "bash") != (exec == "map[taskSupport:optional]") {
			t.Errorf("%s: execution %s", name, exec)
		}
	}
	// The SDK validated both structured answers against their schemas
	// (it reports an error event when one does not fit).
	out := one(t, events, "bash_output")["structured"].(map[string]any)
	if out["id"] != "1" || out["status"] != "running" {
		t.Errorf("bash_output structured content: %v", out)
	}
	list := one(t, events, "list_shells")["structured"].(map[string]any)["shells"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["command"] != "sleep "+marker {
		t.Errorf("list_shells structured content: %v", list)
	}
	if bad := one(t, events, "bad"); bad["isError"] != true || !strings.Contains(fmt.Sprint(bad["text"]), "no such shell 99") {
		t.Errorf("bash_output of no shell: %v", bad)
	}
	waitGone(t, "sleep "+marker, 15*time.Second) // the client closed: the session ended
}

func TestServeTSClientTaskCompletes(t *testing.T) {
	events, _ := runTS(t, "task", "sleep 1; echo the-last-line; exit 3")
	created := one(t, events, "taskCreated")["task"].(map[string]any)
	if created["taskId"] != "shell-1" || created["status"] != "working" || created["pollInterval"] == nil ||
		!strings.Contains(fmt.Sprint(created["statusMessage"]), "running for") {
		t.Errorf("the task: %v", created)
	}
	statuses := eventsNamed(events, "taskStatus")
	if len(statuses) == 0 || statuses[len(statuses)-1]["status"] != "completed" {
		t.Errorf("statuses: %v", statuses)
	}
	res := one(t, events, "result")
	text := fmt.Sprint(res["text"])
	for _, want := range []string{"shell 1 (sleep 1; echo the-last-line; exit 3) exited with 3", "exit code 3", "log: ", "the-last-line"} {
		if !strings.Contains(text, want) {
			t.Errorf("the task's result lacks %q: %q", want, text)
		}
	}
	if sc, _ := res["structured"].(map[string]any); res["isError"] != true || sc["exit_code"] != 3.0 || sc["id"] != "1" {
		t.Errorf("the task's result: %v", res)
	}
}

func TestServeTSClientForegroundTask(t *testing.T) {
	events, _ := runTS(t, "foreground-task", "echo hi; exit 2")
	if id := one(t, events, "taskCreated")["task"].(map[string]any)["taskId"]; id != "call-1" {
		t.Errorf("task id %v", id)
	}
	if res := one(t, events, "result"); res["text"] != "hi\nexit code 2" {
		t.Errorf("result: %v", res)
	}
}

// TestServeTSClientTaskStopped stops a background shell's task with
// kill_shell (given the task's id) and with tasks/cancel: the task ends
// cancelled, no notice is sent, the process is gone from the host.
func TestServeTSClientTaskStopped(t *testing.T) {
	for i, scenario := range []string{"task-kill", "task-cancel"} {
		t.Run(scenario, func(t *testing.T) {
			marker := fmt.Sprintf("%d", 540000+10*(os.Getpid()%10000)+i)
			events, state := runTS(t, scenario, "sleep "+marker)
			if scenario == "task-kill" {
				if k := one(t, events, "killed"); k["text"] != "killed 1: sleep "+marker {
					t.Errorf("kill_shell: %v", k)
				}
			} else if c := one(t, events, "cancelled"); c["status"] != "cancelled" {
				t.Errorf("tasks/cancel: %v", c)
			}
			statuses := eventsNamed(events, "taskStatus")
			if len(statuses) == 0 || statuses[len(statuses)-1]["status"] != "cancelled" || len(eventsNamed(events, "result")) != 0 {
				t.Errorf("after the stop: %v", events)
			}
			if e := one(t, events, "error"); !strings.Contains(fmt.Sprint(e["message"]), "was cancelled") {
				t.Errorf("the stream's end: %v", e)
			}
			waitGone(t, "sleep "+marker, 15*time.Second)
			noNotice(t, state, "1")
		})
	}
}

func TestServeTSClientNote(t *testing.T) {
	events, _ := runTS(t, "note", "sleep 0.5; echo noted; exit 4")
	if s := one(t, events, "started"); !strings.HasPrefix(fmt.Sprint(s["text"]), "started shell 1 (pid ") {
		t.Errorf("without a task: %v", s)
	}
	note := fmt.Sprint(one(t, events, "note")["text"])
	if !strings.Contains(note, "[cshell notice] shell 1 (sleep 0.5; echo noted; exit 4) exited with 4") || !strings.Contains(note, "noted") {
		t.Errorf("no note in the next result: %q", note)
	}
}

func TestServeTSClientProgress(t *testing.T) {
	events, _ := runTS(t, "progress", "for i in 1 2 3; do echo step $i; sleep 1; done")
	p := one(t, events, "progress")
	if p["text"] != "step 1\nstep 2\nstep 3\nexit code 0" {
		t.Errorf("result: %v", p["text"])
	}
	got, _ := p["progress"].([]any)
	if len(got) < 2 || len(got) > 4 {
		t.Fatalf("%d progress notifications in 3 s: %v", len(got), got)
	}
	last := 0.0
	for _, raw := range got {
		n := raw.(map[string]any)
		v, _ := n["progress"].(float64)
		if v <= last || !strings.Contains(fmt.Sprint(n["message"]), "step") {
			t.Errorf("progress %v", n)
		}
		last = v
	}
}

// ---- A 2026-07-28 client with the tasks extension, written here ----
//
// No client implements the tasks extension yet, so this one is written
// from the specification's text (SEP-2575's per-request _meta, SEP-2663's
// tasks), JSON lines by hand, sharing nothing with the server's code.

type specClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	id    int
	mu    sync.Mutex
	resps map[float64]map[string]any
	notes []map[string]any
	wake  chan struct{}
	state string
	dir   string
}

func startSpecClient(t *testing.T) *specClient {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &specClient{t: t, resps: map[float64]map[string]any{}, wake: make(chan struct{}, 256), state: t.TempDir(), dir: dir}
	c.cmd = exec.Command(cshellBin, "--state-dir", c.state, "serve")
	c.cmd.Dir = dir
	c.cmd.Stderr = os.Stderr
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			c.mu.Lock()
			if id, ok := m["id"].(float64); ok {
				c.resps[id] = m
			} else {
				c.notes = append(c.notes, m)
			}
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { c.in.Close(); _ = c.cmd.Wait(); waitSupervisors(t, c.state) })
	return c
}

// meta is the per-request _meta of 2026-07-28; tasks adds the extension
// to the request's capabilities.
func specMeta(tasks bool, more map[string]any) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "spec-client", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	for k, v := range more {
		m[k] = v
	}
	return m
}

// call sends a request and waits for its response.
func (c *specClient) call(method string, params map[string]any) map[string]any {
	c.t.Helper()
	c.id++
	id := float64(c.id)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.After(90 * time.Second)
	for {
		c.mu.Lock()
		r, ok := c.resps[id]
		c.mu.Unlock()
		if ok {
			return r
		}
		select {
		case <-c.wake:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("%s: no response", method)
		}
	}
}

func (c *specClient) result(method string, params map[string]any) map[string]any {
	c.t.Helper()
	r := c.call(method, params)
	res, ok := r["result"].(map[string]any)
	if !ok {
		c.t.Fatalf("%s: %v", method, r)
	}
	return res
}

func (c *specClient) tool(name string, args map[string]any, meta map[string]any) map[string]any {
	c.t.Helper()
	return c.result("tools/call", map[string]any{"name": name, "arguments": args, "_meta": meta})
}

func contentText(res map[string]any) string {
	var sb strings.Builder
	items, _ := res["content"].([]any)
	for _, it := range items {
		if m, ok := it.(map[string]any); ok && m["type"] == "text" {
			sb.WriteString(fmt.Sprint(m["text"]))
		}
	}
	return sb.String()
}

// pollTask asks tasks/get until the task leaves working.
func (c *specClient) pollTask(id string, within time.Duration) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := c.result("tasks/get", map[string]any{"taskId": id, "_meta": specMeta(true, nil)})
		if got["resultType"] != "complete" {
			c.t.Fatalf("tasks/get: resultType %v", got["resultType"])
		}
		if got["status"] != "working" || time.Now().After(deadline) {
			return got
		}
		wait := 1000.0
		if v, ok := got["pollIntervalMs"].(float64); ok {
			wait = v
		}
		time.Sleep(time.Duration(min(wait, 500)) * time.Millisecond)
	}
}

func TestServeExtensionTasks(t *testing.T) {
	c := startSpecClient(t)
	withTasks, plain := specMeta(true, nil), specMeta(false, nil)
	disc := c.result("server/discover", map[string]any{"_meta": withTasks})
	if !strings.Contains(fmt.Sprint(disc["capabilities"]), "io.modelcontextprotocol/tasks") || !strings.Contains(fmt.Sprint(disc["supportedVersions"]), "2025-06-18") {
		t.Errorf("server/discover: %v", disc)
	}

	// A background shell that ends by itself: its task completes with the notice.
	created := c.tool("bash", map[string]any{"command": "sleep 1; echo modern-end", "run_in_background": true}, withTasks)
	if created["resultType"] != "task" || created["taskId"] != "shell-1" || created["status"] != "working" ||
		created["createdAt"] == nil || created["pollIntervalMs"] == nil || created["content"] != nil {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	if now := fmt.Sprint(created["_meta"]); !strings.Contains(now, "model-immediate-response:started shell 1") {
		t.Errorf("no immediate response for the model: %s", now)
	}
	done := c.pollTask("shell-1", 20*time.Second)
	inline, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || inline == nil || inline["isError"] == true || !strings.Contains(contentText(inline), "modern-end") ||
		!strings.Contains(contentText(inline), "exited with 0") {
		t.Errorf("completed task: %v", done)
	}
	// The task id is taken where a shell id is.
	if out := c.tool("bash_output", map[string]any{"bash_id": "shell-1"}, plain); !strings.Contains(contentText(out), "exited with 0") {
		t.Errorf("bash_output of the task id: %v", out)
	}

	// Stopped by tasks/cancel, and by kill_shell with the task id.
	marker := fmt.Sprintf("%d", 550000+os.Getpid()%10000)
	for i, stop := range []string{"tasks/cancel", "kill_shell"} {
		id := fmt.Sprintf("shell-%d", i+2)
		cmd := fmt.Sprintf("sleep %s%d", marker, i)
		if r := c.tool("bash", map[string]any{"command": cmd, "run_in_background": true}, withTasks); r["taskId"] != id {
			t.Fatalf("%s: %v", stop, r)
		}
		waitCount(t, cmd, 1, 10*time.Second)
		if stop == "tasks/cancel" {
			if ack := c.result("tasks/cancel", map[string]any{"taskId": id, "_meta": withTasks}); ack["resultType"] != "complete" {
				t.Errorf("tasks/cancel: %v", ack)
			}
		} else if k := c.tool("kill_shell", map[string]any{"shell_id": id, "grace_seconds": 1}, plain); contentText(k) != "killed "+id[len("shell-"):]+": "+cmd {
			t.Errorf("kill_shell: %v", k)
		}
		if got := c.pollTask(id, 10*time.Second); got["status"] != "cancelled" || got["result"] != nil {
			t.Errorf("%s: the task %v", stop, got)
		}
		waitGone(t, cmd, 15*time.Second)
		noNotice(t, c.state, id[len("shell-"):])
	}
	if ack := c.result("tasks/update", map[string]any{"taskId": "shell-1", "inputResponses": map[string]any{}, "_meta": withTasks}); ack["resultType"] != "complete" {
		t.Errorf("tasks/update: %v", ack)
	}
	for method, code := range map[string]float64{"tasks/result": -32601, "tasks/list": -32601} {
		r := c.call(method, map[string]any{"taskId": "shell-1", "_meta": withTasks})
		if e, _ := r["error"].(map[string]any); e == nil || e["code"] != code {
			t.Errorf("%s: %v", method, r)
		}
	}
	if r := c.call("tasks/get", map[string]any{"taskId": "shell-99", "_meta": withTasks}); r["error"] == nil {
		t.Errorf("tasks/get of no task: %v", r)
	}

	// Without the extension on the request: the shell id at once, and the
	// notice with the next result.
	if r := c.tool("bash", map[string]any{"command": "sleep 0.3; exit 6", "run_in_background": true}, plain); !strings.HasPrefix(contentText(r), "started shell 4 (pid ") {
		t.Fatalf("without tasks: %v", r)
	}
	var text string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !strings.Contains(text, "[cshell notice]"); time.Sleep(100 * time.Millisecond) {
		text = contentText(c.tool("list_shells", map[string]any{}, plain))
	}
	if !strings.Contains(text, "[cshell notice] shell 4 (sleep 0.3; exit 6) exited with 6") {
		t.Errorf("no note: %q", text)
	}

	// Progress during a foreground call, only when the request has a token.
	for _, tok := range []any{"tok-1", nil} {
		c.mu.Lock()
		before := len(c.notes)
		c.mu.Unlock()
		meta := plain
		if tok != nil {
			meta = specMeta(false, map[string]any{"progressToken": tok})
		}
		r := c.tool("bash", map[string]any{"command": "for i in 1 2 3; do echo step $i; sleep 1; done"}, meta)
		if contentText(r) != "step 1\nstep 2\nstep 3\nexit code 0" {
			t.Errorf("foreground: %v", r)
		}
		c.mu.Lock()
		var progress []map[string]any
		for _, n := range c.notes[before:] {
			if n["method"] == "notifications/progress" {
				progress = append(progress, n)
			}
		}
		c.mu.Unlock()
		switch {
		case tok == nil && len(progress) != 0:
			t.Errorf("progress without a token: %v", progress)
		case tok != nil && (len(progress) < 2 || !strings.Contains(fmt.Sprint(progress[0]["params"]), "progressToken:tok-1")):
			t.Errorf("progress with a token: %v", progress)
		}
	}
}

// ---- ready, ready_log, ready_timeout and cwd (the Go SDK's client) ----

func TestServeReady(t *testing.T) {
	c := startServe(t, "")
	port := freePort(t)
	cmd := fmt.Sprintf("sleep 1.5; exec python3 -m http.server %d --bind 127.0.0.1", port)
	began := time.Now()
	text, isErr := c.call("bash", map[string]any{"command": cmd, "run_in_background": true, "expose": []string{fmt.Sprint(port)}, "ready": true, "name": "web"})
	if isErr || !strings.Contains(text, "name: web") || !strings.Contains(text, "ready after") || time.Since(began) < 1500*time.Millisecond {
		t.Fatalf("ready: %q after %s", text, time.Since(began))
	}
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 2*time.Second)
	if err != nil {
		t.Fatalf("the exposed port after ready: %v", err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.0\r\n\r\n")
	if line, _ := bufio.NewReader(conn).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.0 200") {
		t.Errorf("the server answered %q", line)
	}
	conn.Close()

	began = time.Now()
	text, isErr = c.call("bash", map[string]any{"command": "sleep 1; echo listening-now; sleep 300", "run_in_background": true, "ready_log": "listening-(now|soon)"})
	if isErr || !strings.Contains(text, "ready after") || time.Since(began) < time.Second {
		t.Errorf("ready_log: %q after %s", text, time.Since(began))
	}

	text, isErr = c.call("bash", map[string]any{"command": "sleep 300", "run_in_background": true, "ready_log": "never", "ready_timeout": 1})
	if !isErr || !strings.HasPrefix(text, "started shell 3 (pid ") || !strings.Contains(text, "is not ready after 1s") || !strings.Contains(text, "keeps running") {
		t.Errorf("ready_timeout: %q (error %v)", text, isErr)
	}
	if text, _ := c.call("bash_output", map[string]any{"bash_id": "3"}); !strings.Contains(text, "running for") {
		t.Errorf("after ready_timeout: %q", text)
	}

	text, _ = c.call("bash", map[string]any{"command": "sleep 1; exit 9", "run_in_background": true, "ready_log": "never"})
	if !strings.Contains(text, "exited with 9") || !strings.Contains(text, "before it was ready") {
		t.Errorf("ended before ready: %q", text)
	}

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "true", "run_in_background": true, "ready": true}, "ready waits for exposed ports; add expose"},
		{map[string]any{"command": "true", "ready_log": "x"}, "are for background shells: set run_in_background"},
		{map[string]any{"command": "true", "run_in_background": true, "ready_log": "(x"}, "ready_log \"(x\" is not a valid regular expression"},
		{map[string]any{"command": "true", "run_in_background": true, "ready_log": "x", "ready_timeout": 1e9}, "ready_timeout"},
		{map[string]any{"command": "true", "run_in_background": true, "ready_timeout": 5}, "ready_timeout bounds ready and ready_log"},
		{map[string]any{"command": "true", "run_in_background": true, "name": "12"}, "name \"12\""},
	} {
		if text, isErr := c.call("bash", tc.args); !isErr || !strings.Contains(text, tc.want) || strings.Contains(text, "--") {
			t.Errorf("bash %v: %q (error %v), want a tool error saying %q and naming no flag", tc.args, text, isErr, tc.want)
		}
	}
}

func TestServeCwd(t *testing.T) {
	c := startServe(t, "")
	sub := filepath.Join(c.dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.TempDir(), filepath.Join(c.dir, "lnk")); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"sub", sub, "./sub/"} {
		text, isErr := c.call("bash", map[string]any{"command": "pwd; touch made-here", "cwd": cwd})
		if isErr || text != sub+"\nexit code 0" {
			t.Errorf("cwd %q: %q", cwd, text)
		}
	}
	if _, err := os.Stat(filepath.Join(sub, "made-here")); err != nil {
		t.Errorf("the file written in cwd: %v", err)
	}
	text, _ := c.call("bash", map[string]any{"command": "pwd; sleep 300", "run_in_background": true, "cwd": "sub"})
	if !strings.HasPrefix(text, "started shell 1") {
		t.Fatalf("background cwd: %q", text)
	}
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(out, sub); time.Sleep(100 * time.Millisecond) {
		o, _ := c.call("bash_output", map[string]any{"bash_id": "1"})
		out += o
	}
	if !strings.Contains(out, sub+"\n") {
		t.Errorf("background cwd: %q", out)
	}
	for cwd, want := range map[string]string{
		"..":    "is outside the working directory",
		"/etc":  "is outside the working directory",
		"lnk":   "is a symbolic link",
		"nope":  "does not exist",
		"sub/x": "does not exist",
	} {
		if text, isErr := c.call("bash", map[string]any{"command": "pwd", "cwd": cwd}); !isErr || !strings.HasPrefix(text, fmt.Sprintf("cwd %q: ", cwd)) || !strings.Contains(text, want) {
			t.Errorf("cwd %q: %q (error %v), want a tool error saying %q", cwd, text, isErr, want)
		}
	}
}

// TestServeProgress asks the Go SDK's client for progress: notifications
// come during a 3-second foreground call with a token, none without.
func TestServeProgress(t *testing.T) {
	c := startServe(t, "")
	ctx := context.Background()
	for _, tok := range []any{"go-tok", nil} {
		p := &mcp.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "for i in 1 2 3; do echo step $i; sleep 1; done"}}
		if tok != nil {
			p.SetProgressToken(tok)
		}
		r, err := c.cs.CallTool(ctx, p)
		if err != nil || r.IsError {
			t.Fatalf("bash: %v %v", err, r)
		}
		time.Sleep(200 * time.Millisecond) // the client hands notifications on in goroutines of its own
		var got []*mcp.ProgressNotificationParams
	drain:
		for {
			select {
			case n := <-c.progress:
				got = append(got, n)
			default:
				break drain
			}
		}
		if tok == nil && len(got) != 0 {
			t.Errorf("progress without a token: %v", got)
		}
		if tok == nil {
			continue
		}
		// The client hands each on in a goroutine of its own, so they may
		// come out of order; and the first may come before any output
		// when the start is slow (a race build on a busy machine).
		var msgs []string
		stepped := false
		for _, n := range got {
			msgs = append(msgs, fmt.Sprintf("%v %q", n.ProgressToken, n.Message))
			if n.ProgressToken != tok {
				t.Errorf("progress for the token %v, want %v", n.ProgressToken, tok)
			}
			stepped = stepped || strings.Contains(n.Message, "step")
		}
		if len(got) < 2 || !stepped {
			t.Errorf("progress with a token: %d notifications, want 2 or more, one quoting a step: %q", len(got), msgs)
		}
	}
}

// TestServeExtensionTaskAsks: a background shell of a 2026-07-28 client
// with the tasks extension and elicitation is refused a host; its task
// turns input_required with the question, and the client's answer
// (tasks/update, "allow for this session") lets the waiting connection
// through: the task completes with the shell's output.
func TestServeExtensionTaskAsks(t *testing.T) {
	_, hp := remote(t)
	c := startSpecClient(t)
	meta := specMeta(true, nil)
	meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any)["elicitation"] = map[string]any{}
	created := c.tool("bash", map[string]any{"command": "curl -s --noproxy '*' -o /dev/null -w 'got %{http_code}\\n' http://" + hp + "/hello", "run_in_background": true}, meta)
	if created["resultType"] != "task" {
		t.Fatalf("bash: %v", created)
	}
	id := fmt.Sprint(created["taskId"])
	var got map[string]any
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = c.result("tasks/get", map[string]any{"taskId": id, "_meta": meta}); got["status"] != "working" {
			break
		}
	}
	reqs, _ := got["inputRequests"].(map[string]any)
	if got["status"] != "input_required" || len(reqs) != 1 {
		t.Fatalf("the task while its shell waits: %v", got)
	}
	var key string
	for k, v := range reqs {
		key = k
		q := v.(map[string]any)
		if q["method"] != "elicitation/create" || !strings.Contains(fmt.Sprint(q["params"]), hp) {
			t.Errorf("the question: %v", q)
		}
	}
	c.result("tasks/update", map[string]any{"taskId": id, "_meta": meta,
		"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"decision": "session"}}}})
	done := c.pollTask(id, 20*time.Second)
	inline, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || !strings.Contains(contentText(inline), "got 200") {
		t.Errorf("after the answer: %v", done)
	}
}
