//go:build unix

package mcpserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cshell/cshell/mcptasks"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// legacyTask is a 2025-11-25 task as the server sends it.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

// toolResult is a tools/call result as it is on the wire.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Meta              map[string]any  `json:"_meta"`
	Task              *legacyTask     `json:"task"`
	// 2026-07-28's flat task
	ResultType string      `json:"resultType"`
	TaskID     string      `json:"taskId"`
	Status     string      `json:"status"`
	Result     *toolResult `json:"result"`
}

func (r *toolResult) text() string {
	var sb strings.Builder
	for _, c := range r.Content {
		sb.WriteString(c.Text)
	}
	return sb.String()
}

// callTask calls bash asking for a task (2025-11-25) and returns it.
func (c *rawClient) callTask(id string, args map[string]any) (*legacyTask, *toolResult) {
	c.t.Helper()
	var r toolResult
	result(c.t, c.request(id, "tools/call", map[string]any{"name": "bash", "arguments": args, "task": map[string]any{"ttl": 600000}}), &r)
	if r.Task == nil {
		c.t.Fatalf("bash %v: no task in %+v", args, r)
	}
	return r.Task, &r
}

// taskResult waits for a task's result (tasks/result).
func (c *rawClient) taskResult(id, task string) (*toolResult, map[string]json.RawMessage) {
	c.t.Helper()
	a := c.request(id, "tasks/result", map[string]any{"taskId": task})
	if _, ok := a["error"]; ok {
		return nil, a
	}
	var r toolResult
	result(c.t, a, &r)
	return &r, a
}

// TestTasksLegacy plays the tasks of protocol 2025-11-25: the capability,
// the tool marked, a background shell's task that completes when the
// shell ends by itself, one cancelled by kill_shell, one by tasks/cancel,
// a foreground call's task, and the errors of unknown tasks.
func TestTasksLegacy(t *testing.T) {
	c := connectRaw(t, nil)
	init := c.initialize("2025-11-25")
	b, _ := json.Marshal(init["capabilities"])
	if !strings.Contains(string(b), `"tasks":{`) || !strings.Contains(string(b), mcptasks.Extension) {
		t.Errorf("capabilities %s: want tasks and the extension", b)
	}
	var tools struct {
		Tools []map[string]any `json:"tools"`
	}
	result(t, c.request("2", "tools/list", map[string]any{}), &tools)
	for _, tl := range tools.Tools {
		_, marked := tl["execution"]
		if marked != (tl["name"] == "bash") {
			t.Errorf("tool %v: execution %v", tl["name"], tl["execution"])
		}
	}

	// A shell that ends by itself: its task completes with the notice.
	task, r := c.callTask("3", map[string]any{"command": gate("go1") + "; echo the-end; exit 3", "run_in_background": true, "name": "ends"})
	if task.TaskID != "shell-1" || task.Status != "working" || task.TTL != 600000 {
		t.Errorf("the task: %+v", task)
	}
	if now, _ := r.Meta["io.modelcontextprotocol/model-immediate-response"].(string); !strings.HasPrefix(now, "started shell 1 (pid ") {
		t.Errorf("the text for the model at once: %q", now)
	}
	var got legacyTask
	result(t, c.request("4", "tasks/get", map[string]any{"taskId": "shell-1"}), &got)
	if got.Status != "working" || !strings.HasPrefix(got.StatusMessage, "shell 1: running for ") {
		t.Errorf("tasks/get of a running shell: %+v", got)
	}
	c.open("go1")
	res, a := c.taskResult("5", "shell-1")
	if res == nil {
		t.Fatalf("tasks/result: %s", a["error"])
	}
	var end EndOfShell
	if err := json.Unmarshal(res.StructuredContent, &end); err != nil {
		t.Fatal(err)
	}
	meta := c.meta("1")
	if !res.IsError || end.ID != "1" || end.Name != "ends" || end.Status != shells.StatusExited || end.ExitCode == nil || *end.ExitCode != 3 ||
		end.Log != meta.Log || fmt.Sprint(end.LastLines) != "[the-end]" {
		t.Errorf("the task's result: %+v, %s", res, res.StructuredContent)
	}
	if txt := res.text(); !strings.HasPrefix(txt, `shell 1 "ends" (`) || !strings.HasSuffix(txt, "last lines:\nthe-end") {
		t.Errorf("the task's result text: %q", txt)
	}
	if rel, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any); rel["taskId"] != "shell-1" {
		t.Errorf("the result's related task: %v", res.Meta)
	}
	c.notification("notifications/tasks/status", func(p map[string]any) bool {
		return p["taskId"] == "shell-1" && p["status"] == "completed"
	})

	// A shell stopped with kill_shell: its task is cancelled, and has no result.
	c.callTask("6", map[string]any{"command": "sleep 600", "run_in_background": true})
	var killed toolResult
	result(t, c.request("7", "tools/call", map[string]any{"name": "kill_shell", "arguments": map[string]any{"shell_id": "shell-2", "grace_seconds": 1}}), &killed)
	if killed.IsError || !strings.HasPrefix(killed.text(), "killed 2: sleep 600") {
		t.Errorf("kill_shell shell-2: %+v", killed)
	}
	result(t, c.request("8", "tasks/get", map[string]any{"taskId": "shell-2"}), &got)
	if got.Status != "cancelled" || !strings.HasPrefix(got.StatusMessage, "stopped with kill_shell: killed") {
		t.Errorf("the task of a killed shell: %+v", got)
	}
	if _, a := c.taskResult("9", "shell-2"); !strings.Contains(string(a["error"]), "-32602") {
		t.Errorf("tasks/result of a cancelled task: %s", a["error"])
	}

	// tasks/cancel stops the shell.
	c.callTask("10", map[string]any{"command": "sleep 600", "run_in_background": true})
	result(t, c.request("11", "tasks/cancel", map[string]any{"taskId": "shell-3"}), &got)
	if got.Status != "cancelled" {
		t.Errorf("tasks/cancel: %+v", got)
	}
	waitFor(t, "shell 3 to be stopped", func() bool { return c.meta("3").Status == shells.StatusKilled })
	if a := c.request("12", "tasks/cancel", map[string]any{"taskId": "shell-3"}); !strings.Contains(string(a["error"]), "already cancelled") {
		t.Errorf("tasks/cancel of a cancelled task: %s", a["error"])
	}

	// A foreground call asked as a task: call-N, completed with the answer.
	task, _ = c.callTask("13", map[string]any{"command": "echo in-task; exit 6"})
	if !strings.HasPrefix(task.TaskID, "call-") {
		t.Errorf("a foreground task: %+v", task)
	}
	res, a = c.taskResult("14", task.TaskID)
	if res == nil || res.text() != "in-task\nexit code 6" {
		t.Errorf("the foreground task's result: %+v %s", res, a["error"])
	}
	result(t, c.request("15", "tasks/get", map[string]any{"taskId": task.TaskID}), &got)
	if got.Status != "completed" || got.StatusMessage != "exit code 6" {
		t.Errorf("the foreground task: %+v", got)
	}

	// A foreground task cancelled: its command stops.
	task, _ = c.callTask("16", map[string]any{"command": "echo $$ > fg.pid; exec sleep 600"})
	pid := c.pidFile("fg.pid")
	result(t, c.request("17", "tasks/cancel", map[string]any{"taskId": task.TaskID}), &got)
	waitFor(t, "the cancelled foreground task's command to end", func() bool { return !alive(pid) })

	var list struct {
		Tasks []legacyTask `json:"tasks"`
	}
	result(t, c.request("18", "tasks/list", map[string]any{}), &list)
	var ids []string
	for _, tk := range list.Tasks {
		ids = append(ids, tk.TaskID+":"+tk.Status)
	}
	if want := fmt.Sprintf("[shell-1:completed shell-2:cancelled shell-3:cancelled %s:completed %s:cancelled]", "call-1", "call-2"); fmt.Sprint(ids) != want {
		t.Errorf("tasks/list: %v, want %s", ids, want)
	}
	if a := c.request("19", "tasks/get", map[string]any{"taskId": "shell-99"}); !strings.Contains(string(a["error"]), "-32602") {
		t.Errorf("tasks/get of an unknown task: %s", a["error"])
	}
}

// modernMeta is the _meta of a 2026-07-28 request whose client declares
// the tasks extension.
func modernMeta(tasks bool) map[string]any {
	caps := map[string]any{}
	if tasks {
		caps["extensions"] = map[string]any{mcptasks.Extension: map[string]any{}}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}
}

// TestTasksModern checks the tasks extension of 2026-07-28: a background
// shell's call is answered with its task, whose tasks/get carries the
// result inline once the shell ended; with shells.notify note, the same
// client gets no task.
func TestTasksModern(t *testing.T) {
	c := connectRaw(t, nil)
	var r toolResult
	result(t, c.request("1", "tools/call", map[string]any{"_meta": modernMeta(true), "name": "bash",
		"arguments": map[string]any{"command": gate("go") + "; echo done-modern", "run_in_background": true}}), &r)
	if r.ResultType != "task" || r.TaskID != "shell-1" || r.Status != "working" {
		t.Fatalf("a background call: %+v", r)
	}
	c.open("go")
	waitFor(t, "the task to complete", func() bool {
		result(t, c.request(`"get"`, "tasks/get", map[string]any{"_meta": modernMeta(true), "taskId": "shell-1"}), &r)
		return r.Status == "completed"
	})
	if r.Result == nil || r.Result.IsError || !strings.HasSuffix(r.Result.text(), "last lines:\ndone-modern") {
		t.Errorf("the completed task's result: %+v", r.Result)
	}
	// A foreground call of the same client is answered as ever.
	result(t, c.request("2", "tools/call", map[string]any{"_meta": modernMeta(true), "name": "bash",
		"arguments": map[string]any{"command": "echo fg"}}), &r)
	if r.ResultType == "task" || r.text() != "fg\nexit code 0" {
		t.Errorf("a foreground call: %+v", r)
	}

	note := connectRaw(t, &policy.Config{Shells: policy.ShellsConfig{Notify: "note"}})
	result(t, note.request("1", "tools/call", map[string]any{"_meta": modernMeta(true), "name": "bash",
		"arguments": map[string]any{"command": "sleep 600", "run_in_background": true}}), &r)
	if r.ResultType == "task" || !strings.HasPrefix(r.text(), "started shell 1 ") {
		t.Errorf("notify note: %+v", r)
	}
}
