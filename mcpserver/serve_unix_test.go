//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// errorCode is an answer's error code and message ("" when it is none).
func errorCode(t *testing.T, a map[string]json.RawMessage) (int, string) {
	t.Helper()
	if a["error"] == nil {
		return 0, ""
	}
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(a["error"], &e); err != nil {
		t.Fatalf("error %s: %v", a["error"], err)
	}
	return e.Code, e.Message
}

// TestHostileLines sends the whole server what a buggy or hostile client
// might: lines that are no JSON-RPC message, a batch, a line past the
// bound, ids the SDK cannot keep, an id reused while in flight, and a
// cancellation by the client's id. Each is answered (or not) and the
// session goes on.
func TestHostileLines(t *testing.T) {
	c := connectRaw(t, nil)
	c.initialize("2025-06-18")
	for _, tc := range []struct {
		line    string
		code    int
		message string
	}{
		{"this is no json", -32700, "parse error"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`, -32700, "parse error"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "batches are not supported"},
		{"{" + strings.Repeat(" ", maxMessage) + "}", -32700, "parse error"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "invalid request"},
	} {
		c.send(tc.line)
		code, msg := errorCode(t, c.answer("null"))
		if code != tc.code || !strings.Contains(msg, tc.message) {
			t.Errorf("%.60q: error %d %q, want %d %q", tc.line, code, msg, tc.code, tc.message)
		}
	}
	// Ids come back as the client wrote them.
	for _, id := range []string{`1.5`, `"x y"`, `123456789012345678901234567890`, `-0`} {
		a := c.request(id, "ping", map[string]any{})
		if code, msg := errorCode(t, a); code != 0 || string(a["result"]) != "{}" {
			t.Errorf("ping with id %s: %s %d %q", id, a["result"], code, msg)
		}
	}
	// A method the server does not know is answered with the client's id.
	if code, _ := errorCode(t, c.request(`"m"`, "no/such/method", map[string]any{})); code != -32601 {
		t.Errorf("an unknown method: code %d, want -32601", code)
	}

	// An id reused while its request is in flight is refused; once
	// answered, it is free again.
	c.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > seven.pid; ` + gate("go") + `; echo seven"}}}`)
	c.pidFile("seven.pid")
	c.send(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	// The refusal carries the id, and so will the call's answer: tell them
	// apart by what they hold.
	dup := c.answer("7")
	if code, msg := errorCode(t, dup); code != -32600 || !strings.Contains(msg, "still being answered") {
		t.Errorf("a duplicate id: %s", dup["error"])
	}
	c.open("go")
	var r toolResult
	result(t, c.answer("7"), &r)
	if r.text() != "seven\nexit code 0" {
		t.Errorf("the call of id 7: %+v", r)
	}
	if a := c.request("7", "ping", map[string]any{}); string(a["result"]) != "{}" {
		t.Errorf("id 7 once free: %v", a)
	}

	// A cancellation names the request by the client's id.
	c.send(`{"jsonrpc":"2.0","id":"long","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > long.pid; exec sleep 600"}}}`)
	pid := c.pidFile("long.pid")
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"long","reason":"test"}}`)
	waitFor(t, "the cancelled command to end", func() bool { return !alive(pid) })
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}`)
	if a := c.request(`"after"`, "ping", map[string]any{}); string(a["result"]) != "{}" {
		t.Errorf("ping after it all: %v", a)
	}
	select {
	case l := <-c.bad:
		t.Errorf("the server wrote a line that is no JSON object: %q", l)
	default:
	}
}

// TestForegroundSlots checks that with shells.maxForegroundCalls 1 the
// foreground calls wait for their turn, and that past maxWaitingCalls
// waiting one more is refused at once with a sentence (tasks let more
// calls wait than the requests a client may hold).
func TestForegroundSlots(t *testing.T) {
	one := 1
	c := connectRaw(t, &policy.Config{Shells: policy.ShellsConfig{MaxForegroundCalls: &one}})
	c.initialize("2025-11-25")
	c.callTask(`"a"`, map[string]any{"command": "echo $$ > a.pid; " + gate("go") + "; echo A"})
	c.pidFile("a.pid")
	const extra = 4
	var tasks []string
	for i := range maxWaitingCalls + extra {
		task, _ := c.callTask(fmt.Sprintf(`"w%d"`, i), map[string]any{"command": fmt.Sprintf("echo waited-%d", i)})
		tasks = append(tasks, task.TaskID)
	}
	var refused []string
	waitFor(t, fmt.Sprintf("%d calls to be refused", extra), func() bool {
		var list struct {
			Tasks []legacyTask `json:"tasks"`
		}
		result(t, c.request(`"list"`, "tasks/list", map[string]any{}), &list)
		refused = refused[:0]
		for _, tk := range list.Tasks {
			if tk.Status == "completed" {
				refused = append(refused, tk.TaskID)
			}
		}
		return len(refused) >= extra
	})
	if len(refused) != extra {
		t.Errorf("%d calls refused, want %d", len(refused), extra)
	}
	want := fmt.Sprintf("1 foreground calls run (shells.maxForegroundCalls) and %d more wait for a turn, the most that may; wait for some to end, or run long ones with run_in_background", maxWaitingCalls)
	for _, id := range refused {
		r, a := c.taskResult(`"r-`+id+`"`, id)
		if r == nil || !r.IsError || r.text() != want {
			t.Errorf("refused task %s: %+v %s", id, r, a["error"])
		}
	}
	// Cancel the waiting calls but the newest few, then let them run in
	// turn.
	isRefused := map[string]bool{}
	for _, id := range refused {
		isRefused[id] = true
	}
	var keep []string
	for i := len(tasks) - 1; i >= 0; i-- {
		id := tasks[i]
		switch {
		case isRefused[id]:
		case len(keep) < 3:
			keep = append(keep, id)
		default:
			var got legacyTask
			result(t, c.request(`"c-`+id+`"`, "tasks/cancel", map[string]any{"taskId": id}), &got)
		}
	}
	c.open("go")
	for _, id := range keep {
		r, a := c.taskResult(`"k-`+id+`"`, id)
		if r == nil || r.IsError || !strings.HasPrefix(r.text(), "waited-") || !strings.HasSuffix(r.text(), "\nexit code 0") {
			t.Errorf("a call that waited its turn (%s): %+v %s", id, r, a["error"])
		}
	}
}

// TestServeBadPolicy checks that a policy that cannot hold ends Serve at
// once with the reason.
func TestServeBadPolicy(t *testing.T) {
	m, err := shells.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	home := resolvedTemp(t)
	missing := home + "/missing"
	in, _ := io.Pipe()
	_, out := io.Pipe()
	err = Serve(context.Background(), m, Options{Run: shells.RunOptions{Request: plan.Request{Isolation: container.Process,
		FS: policy.FilesystemRequest{Home: home, Cwd: missing}}}, In: in, Out: out})
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Serve in a missing directory: %v", err)
	}
}

// TestServeContextEnds checks that the end of Serve's context ends it
// cleanly, whatever the client does, and that a session left unnamed is
// the process's.
func TestServeContextEnds(t *testing.T) {
	m, err := shells.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	dir := resolvedTemp(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	defer outR.Close()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, m, Options{Run: shells.RunOptions{Request: plan.Request{Isolation: container.Process,
			FS: policy.FilesystemRequest{Home: dir, Cwd: dir}}}, In: inR, Out: outW})
	}()
	// A request, read to its answer, shows the server up.
	go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	line := make([]byte, 64<<10)
	if n, err := outR.Read(line); err != nil || !strings.Contains(string(line[:n]), `"serverInfo"`) {
		t.Fatalf("initialize: %q %v", line[:n], err)
	}
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after its context ended: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("Serve did not end with its context")
	}
}

// TestClientStopsReading checks that a client that stops reading ends
// the server once an answer cannot be written, though its stdin stays
// open, and that the command of the call is stopped with it.
func TestClientStopsReading(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ts := startServer(t, nil, inR, outW)
	defer inW.Close()
	go io.Copy(io.Discard, outR)
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > first.pid; ` + gate("go") + `"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo $$ > second.pid; exec sleep 600"}}}`,
	} {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	ts.pidFile("first.pid")
	second := ts.pidFile("second.pid")
	outR.Close()
	ts.open("go") // the first call's answer finds no reader
	if ended, _ := ts.wait(); !ended {
		t.Fatal("the server did not end when its answers could not be written")
	}
	waitFor(t, "the second call's command to end with the server", func() bool { return !alive(second) })
	// Its error (the closed pipe) is Serve's to return: not the test's.
	<-ts.served
	ts.served <- nil
}
