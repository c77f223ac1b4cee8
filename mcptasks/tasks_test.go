package mcptasks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client side here is written from the specifications' text (the
// 2026-07-28 tasks extension and the 2025-11-25 tasks), as JSON lines, so
// that it shares nothing with the code under test.

type line = map[string]any

type rawClient struct {
	t       *testing.T
	in      *io.PipeWriter
	id      int
	mu      sync.Mutex
	replies map[float64]line
	notes   []line
	arrived chan struct{}
}

// fixture is a server with two tools: work answers with a task when the
// client takes one, quick never does.
type fixture struct {
	tasks     *Tasks
	cancelled chan string
	c         *rawClient
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{cancelled: make(chan string, 4)}
	f.tasks = New(Options{
		Cancel:   func(id string) { f.cancelled <- id },
		Describe: func(id string) string { return "busy with " + id },
		Tools:    []string{"work"},
	})
	caps := &mcp.ServerCapabilities{}
	Declare(caps)
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	n := 0
	var mu sync.Mutex
	mcp.AddTool(srv, &mcp.Tool{Name: "work"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		n++
		id := fmt.Sprintf("job-%d", n)
		mu.Unlock()
		if !Accepts(req) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done at once"}}}, nil, nil
		}
		r, err := f.tasks.Start(req, id, "started", "look at "+id)
		return r, nil, err
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "quick"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "quick"}}}, nil, nil
	})
	if err := f.tasks.Install(srv); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), f.tasks.Transport(&mcp.IOTransport{Reader: inR, Writer: outW}), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, in: inW, replies: map[float64]line{}, arrived: make(chan struct{}, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m line
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			c.mu.Lock()
			if id, ok := m["id"].(float64); ok {
				c.replies[id] = m
			} else {
				c.notes = append(c.notes, m)
			}
			c.mu.Unlock()
			c.arrived <- struct{}{}
		}
	}()
	t.Cleanup(func() { inW.Close(); ss.Close(); outW.Close() })
	f.c = c
	return f
}

// call sends a request and returns its reply (result or error).
func (c *rawClient) call(method string, params line) line {
	c.t.Helper()
	c.id++
	id := float64(c.id)
	b, _ := json.Marshal(line{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		r, ok := c.replies[id]
		c.mu.Unlock()
		if ok {
			return r
		}
		select {
		case <-c.arrived:
		case <-deadline:
			c.t.Fatalf("%s: no reply", method)
		}
	}
}

func (c *rawClient) notify(method string) {
	b, _ := json.Marshal(line{"jsonrpc": "2.0", "method": method})
	_, _ = c.in.Write(append(b, '\n'))
}

func result(t *testing.T, r line) line {
	t.Helper()
	res, ok := r["result"].(line)
	if !ok {
		t.Fatalf("want a result, got %v", r)
	}
	return res
}

func errorCode(r line) float64 {
	e, _ := r["error"].(line)
	code, _ := e["code"].(float64)
	return code
}

func TestLegacyTasks(t *testing.T) {
	f := newFixture(t)
	c := f.c
	init := result(t, c.call("initialize", line{"protocolVersion": "2025-11-25", "capabilities": line{},
		"clientInfo": line{"name": "spec-client", "version": "1"}}))
	caps := init["capabilities"].(line)
	if call := fmt.Sprint(caps["tasks"]); !strings.Contains(call, "call:map[]") || !strings.Contains(call, "cancel:map[]") {
		t.Errorf("initialize capabilities: %v", caps)
	}
	c.notify("notifications/initialized")

	tools := result(t, c.call("tools/list", line{}))["tools"].([]any)
	for _, tl := range tools {
		tm := tl.(line)
		exec := fmt.Sprint(tm["execution"])
		if (tm["name"] == "work") != strings.Contains(exec, "taskSupport:optional") {
			t.Errorf("tool %v: execution %s", tm["name"], exec)
		}
	}

	// Asked with a task field: a task, in the 2025-11-25 form.
	created := result(t, c.call("tools/call", line{"name": "work", "arguments": line{}, "task": line{"ttl": 60000}}))
	tk, ok := created["task"].(line)
	if !ok || tk["taskId"] != "job-1" || tk["status"] != "working" || tk["ttl"] != 60000.0 || tk["pollInterval"] != 1000.0 ||
		tk["createdAt"] == nil || created["content"] != nil ||
		fmt.Sprint(created["_meta"]) != "map[io.modelcontextprotocol/model-immediate-response:look at job-1]" {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	got := result(t, c.call("tasks/get", line{"taskId": "job-1"}))
	if got["status"] != "working" || got["statusMessage"] != "busy with job-1" || got["result"] != nil {
		t.Errorf("tasks/get: %v", got)
	}
	if list := result(t, c.call("tasks/list", line{}))["tasks"].([]any); len(list) != 1 {
		t.Errorf("tasks/list: %v", list)
	}
	// tasks/result waits for the end.
	go func() {
		time.Sleep(200 * time.Millisecond)
		f.tasks.Complete("job-1", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the answer"}}}, "")
	}()
	res := result(t, c.call("tasks/result", line{"taskId": "job-1"}))
	if fmt.Sprint(res["content"]) != "[map[text:the answer type:text]]" ||
		fmt.Sprint(res["_meta"]) != "map[io.modelcontextprotocol/related-task:map[taskId:job-1]]" {
		t.Errorf("tasks/result: %v", res)
	}
	// The notification goes out as the task ends, on a write of its own:
	// it may come just after the result.
	var notes string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c.mu.Lock()
		notes = fmt.Sprint(c.notes)
		c.mu.Unlock()
		if strings.Contains(notes, "status:completed") {
			break
		}
	}
	if !strings.Contains(notes, "notifications/tasks/status") || !strings.Contains(notes, "status:completed") {
		t.Errorf("no status notification: %s", notes)
	}
	if f.tasks.Complete("job-1", nil, "") || f.tasks.Cancel("job-1", "late") {
		t.Errorf("an ended task ended again")
	}
	if _, err := f.tasks.Ask(context.Background(), "job-1", "elicitation/create", nil); !errors.Is(err, ErrNoInput) {
		t.Errorf("Ask of a 2025-11-25 task: %v", err)
	}

	// Cancelled by the client: at once, the work stopped after.
	result(t, c.call("tools/call", line{"name": "work", "arguments": line{}, "task": line{}}))
	cancel := result(t, c.call("tasks/cancel", line{"taskId": "job-2"}))
	if cancel["status"] != "cancelled" || cancel["taskId"] != "job-2" {
		t.Errorf("tasks/cancel: %v", cancel)
	}
	select {
	case id := <-f.cancelled:
		if id != "job-2" {
			t.Errorf("cancelled %s", id)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("the work was not stopped")
	}
	for method, want := range map[string]float64{"tasks/cancel": -32602, "tasks/result": -32602, "tasks/update": -32601} {
		if code := errorCode(c.call(method, line{"taskId": "job-2"})); code != want {
			t.Errorf("%s of a cancelled task: code %v, want %v", method, code, want)
		}
	}
	if code := errorCode(c.call("tasks/get", line{"taskId": "job-99"})); code != -32602 {
		t.Errorf("tasks/get of no task: code %v", code)
	}
	// Without a task field, the same tool answers as always.
	plain := result(t, c.call("tools/call", line{"name": "work", "arguments": line{}}))
	if plain["task"] != nil || !strings.Contains(fmt.Sprint(plain["content"]), "done at once") {
		t.Errorf("plain call: %v", plain)
	}
}

func TestExtensionTasks(t *testing.T) {
	f := newFixture(t)
	c := f.c
	with := line{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientInfo: line{"name": "spec-client", "version": "1"},
		mcp.MetaKeyClientCapabilities: line{"extensions": line{Extension: line{}}}}
	without := line{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: line{}}
	disc := result(t, c.call("server/discover", line{"_meta": with}))
	if !strings.Contains(fmt.Sprint(disc["capabilities"]), Extension) {
		t.Errorf("server/discover: %v", disc)
	}

	created := result(t, c.call("tools/call", line{"name": "work", "arguments": line{}, "_meta": with}))
	if created["resultType"] != "task" || created["taskId"] != "job-1" || created["status"] != "working" ||
		created["ttlMs"] != 3.6e+06 || created["pollIntervalMs"] != 1000.0 || created["task"] != nil || created["result"] != nil ||
		!strings.Contains(fmt.Sprint(created["_meta"]), "model-immediate-response:look at job-1") {
		t.Fatalf("CreateTaskResult: %v", created)
	}
	got := result(t, c.call("tasks/get", line{"taskId": "job-1", "_meta": with}))
	if got["resultType"] != "complete" || got["status"] != "working" || got["statusMessage"] != "busy with job-1" {
		t.Errorf("tasks/get: %v", got)
	}
	if ack := result(t, c.call("tasks/update", line{"taskId": "job-1", "inputResponses": line{"x": line{}}, "_meta": with})); ack["resultType"] != "complete" {
		t.Errorf("tasks/update: %v", ack)
	}
	// A question: input_required until tasks/update answers it.
	answered := make(chan string, 1)
	go func() {
		r, err := f.tasks.Ask(context.Background(), "job-1", "elicitation/create", line{"message": "allow?"})
		answered <- fmt.Sprint(string(r), err)
	}()
	var asking line
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if asking = result(t, c.call("tasks/get", line{"taskId": "job-1", "_meta": with})); asking["status"] == "input_required" {
			break
		}
	}
	reqs, _ := asking["inputRequests"].(line)
	if asking["status"] != "input_required" || fmt.Sprint(reqs["q1"]) != "map[method:elicitation/create params:map[message:allow?]]" {
		t.Fatalf("a task with a question: %v", asking)
	}
	result(t, c.call("tasks/update", line{"taskId": "job-1", "inputResponses": line{"q1": line{"action": "accept"}, "q9": line{}}, "_meta": with}))
	select {
	case a := <-answered:
		if a != `{"action":"accept"}<nil>` {
			t.Errorf("the answer: %s", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer never came")
	}
	if after := result(t, c.call("tasks/get", line{"taskId": "job-1", "_meta": with})); after["status"] != "working" || after["inputRequests"] != nil {
		t.Errorf("after the answer: %v", after)
	}
	f.tasks.Complete("job-1", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "the answer"}}, IsError: true}, "it failed")
	got = result(t, c.call("tasks/get", line{"taskId": "job-1", "_meta": with}))
	inline, _ := got["result"].(line)
	if got["status"] != "completed" || got["statusMessage"] != "it failed" || inline == nil || inline["isError"] != true || !strings.Contains(fmt.Sprint(inline["content"]), "the answer") {
		t.Errorf("completed tasks/get: %v", got)
	}
	for method, want := range map[string]float64{"tasks/result": -32601, "tasks/list": -32601} {
		if code := errorCode(c.call(method, line{"taskId": "job-1", "_meta": with})); code != want {
			t.Errorf("%s: code %v, want %v", method, code, want)
		}
	}

	result(t, c.call("tools/call", line{"name": "work", "arguments": line{}, "_meta": with}))
	if ack := result(t, c.call("tasks/cancel", line{"taskId": "job-2", "_meta": with})); ack["resultType"] != "complete" || ack["status"] != nil {
		t.Errorf("tasks/cancel: %v", ack)
	}
	<-f.cancelled
	if got := result(t, c.call("tasks/get", line{"taskId": "job-2", "_meta": with})); got["status"] != "cancelled" {
		t.Errorf("after tasks/cancel: %v", got)
	}
	// Cancelling an ended task is acknowledged, and changes nothing.
	if ack := result(t, c.call("tasks/cancel", line{"taskId": "job-1", "_meta": with})); ack["resultType"] != "complete" {
		t.Errorf("tasks/cancel of an ended task: %v", ack)
	}
	if code := errorCode(c.call("tasks/cancel", line{"taskId": "nope", "_meta": with})); code != -32602 {
		t.Errorf("tasks/cancel of no task: %v", code)
	}

	// Without the extension on the request: no task.
	plain := result(t, c.call("tools/call", line{"name": "work", "arguments": line{}, "_meta": without}))
	if plain["resultType"] != "complete" || !strings.Contains(fmt.Sprint(plain["content"]), "done at once") {
		t.Errorf("call without the extension: %v", plain)
	}
	if f.tasks.Known("job-3") || len(f.tasks.Working()) != 0 {
		t.Errorf("tasks left: %v", f.tasks.Working())
	}
}

func TestCarryTask(t *testing.T) {
	for in, want := range map[string]string{
		`{"name":"x","task":{"ttl":5}}`:              `{"_meta":{"cshell.mcptasks/asked":{"ttl":5}},"name":"x","task":{"ttl":5}}`,
		`{"name":"x","task":{},"_meta":{"a":1}}`:     `{"_meta":{"a":1,"cshell.mcptasks/asked":{}},"name":"x","task":{}}`,
		`{"name":"x"}`:                               `{"name":"x"}`,
		`{"name":"x","task":{},"_meta":"not a map"}`: `{"name":"x","task":{},"_meta":"not a map"}`,
		`[1,2]`: `[1,2]`,
	} {
		if got := string(carryTask(json.RawMessage(in))); got != want {
			t.Errorf("carryTask(%s) = %s, want %s", in, got, want)
		}
	}
}

// Ended tasks go once their time-to-live passed, and past maxEnded the
// oldest first; a working task stays whatever its age.
func TestPrune(t *testing.T) {
	tt := New(Options{})
	now := time.Now().UTC()
	add := func(id string, st Status, age, ttl time.Duration) {
		tt.tasks[id] = &task{id: id, status: st, created: now.Add(-age), ttl: ttl, done: make(chan struct{})}
		tt.order = append(tt.order, id)
	}
	add("old-working", Working, 2*MaxTTL, time.Millisecond)
	add("expired", Completed, time.Minute, time.Second)
	add("fresh", Completed, time.Second, time.Minute)
	for i := range maxEnded + 10 {
		add(fmt.Sprintf("many-%d", i), Cancelled, 0, MaxTTL)
	}
	tt.prune(now)
	for id, want := range map[string]bool{"old-working": true, "expired": false, "fresh": false, "many-0": false, "many-9": false, "many-10": true,
		fmt.Sprintf("many-%d", maxEnded+9): true} {
		if _, ok := tt.tasks[id]; ok != want {
			t.Errorf("%s kept: %v, want %v", id, ok, want)
		}
	}
	if len(tt.order) != len(tt.tasks) {
		t.Errorf("order %d, tasks %d", len(tt.order), len(tt.tasks))
	}
}
