//go:build e2e

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient drives `cshell serve` over stdio with the Go SDK's client.
type mcpClient struct {
	t        *testing.T
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	notices  chan string
	progress chan *mcp.ProgressNotificationParams
	state    string
	dir      string // the server's working directory, symlinks resolved
}

// startServe starts a server and connects with the Go SDK's newest
// protocol (2026-07-28: server/discover and per-request _meta).
func startServe(t *testing.T, cfg string, extra ...string) *mcpClient {
	return startServeVersion(t, "", cfg, extra...)
}

// startServeVersion connects with a protocol version of the client's
// choosing ("" for its newest); versions before 2026-07-28 open with
// initialize.
func startServeVersion(t *testing.T, version, cfg string, extra ...string) *mcpClient {
	t.Helper()
	c := &mcpClient{t: t, notices: make(chan string, 16), progress: make(chan *mcp.ProgressNotificationParams, 64), state: t.TempDir()}
	args := []string{"--state-dir", c.state}
	if cfg != "" {
		args = append(args, "--config", cfg)
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	c.cmd = exec.Command(cshellBin, append(append(args, "serve"), extra...)...)
	c.cmd.Dir = c.dir
	c.cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "cshell-e2e", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			c.notices <- fmt.Sprint(r.Params.Data)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			c.progress <- r.Params
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: c.cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to cshell serve: %v", err)
	}
	c.cs = cs
	t.Cleanup(func() { cs.Close(); waitSupervisors(t, c.state) })
	return c
}

// waitSupervisors waits until the supervisors of a state dir's shells
// have gone (a server's end ends them), so that the dir can be removed.
func waitSupervisors(t *testing.T, state string) {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(state, "shells", "*", "meta.json"))
	for _, f := range metas {
		var m struct {
			Supervisor int `json:"supervisor_pid"`
		}
		b, _ := os.ReadFile(f)
		if json.Unmarshal(b, &m) != nil || m.Supervisor <= 0 {
			continue
		}
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", m.Supervisor)); err != nil {
				break
			}
		}
	}
}

// call calls a tool and returns its text and whether it is a tool error.
func (c *mcpClient) call(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error %v", name, err)
	}
	var text strings.Builder
	for _, content := range r.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), r.IsError
}

// TestServeTools plays the tools with the Go SDK's client, once in each
// protocol generation: 2026-07-28 (server/discover, per-request _meta)
// and 2025-06-18 (initialize).
func TestServeTools(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) { testServeTools(t, version) })
	}
}

func testServeTools(t *testing.T, version string) {
	c := startServeVersion(t, version, "")
	if got := c.cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol %s, want %s", got, version)
	}
	var v struct{ Version string }
	if r := run(t, call{args: []string{"--json", "version"}}); json.Unmarshal([]byte(r.stdout), &v) != nil || v.Version == "" {
		t.Fatalf("version --json: %q", r.stdout)
	}
	if info := c.cs.InitializeResult().ServerInfo; info == nil || info.Name != "cshell" || info.Version != v.Version {
		t.Errorf("server info %+v, want cshell %s (cshell version's)", info, v.Version)
	}
	ctx := context.Background()
	tools, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tool := range tools.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		schemas[tool.Name] = string(b)
		a := tool.Annotations
		if a == nil || tool.Title == "" {
			t.Errorf("tool %s: no title or annotations", tool.Name)
			continue
		}
		readOnly := tool.Name == "bash_output" || tool.Name == "list_shells"
		destructive := a.DestructiveHint == nil || *a.DestructiveHint // the protocol's default is true
		if a.ReadOnlyHint != readOnly || (tool.Name == "kill_shell" && !destructive) {
			t.Errorf("tool %s: annotations %+v", tool.Name, a)
		}
		if (tool.OutputSchema != nil) != readOnly {
			t.Errorf("tool %s: output schema %v", tool.Name, tool.OutputSchema)
		}
	}
	for name, field := range map[string]string{"bash": "run_in_background", "bash_output": "wait_seconds", "kill_shell": "grace_seconds", "list_shells": "object"} {
		if !strings.Contains(schemas[name], field) {
			t.Errorf("tool %s: schema %q lacks %q", name, schemas[name], field)
		}
	}
	for _, field := range []string{"ready", "ready_log", "ready_timeout", "cwd", "name"} {
		if !strings.Contains(schemas["bash"], `"`+field+`"`) {
			t.Errorf("bash: schema lacks %q", field)
		}
	}

	// Foreground: output and exit code, in the sandbox.
	text, isErr := c.call("bash", map[string]any{"command": "echo out; echo err >&2; touch /usr/x 2>/dev/null || echo read-only; exit 3"})
	// The refused write is told in the model's text too.
	if isErr || text != "out\nerr\ncshell: refused write: /usr is read-only in the shell; --rw /usr lets shells write there\nread-only\nexit code 3" {
		t.Errorf("foreground bash: %q (error %v)", text, isErr)
	}
	// The cap: 30,000 characters, saying how much was cut.
	text, _ = c.call("bash", map[string]any{"command": "head -c 50000 /dev/zero | tr '\\0' x"})
	if !strings.HasPrefix(text, "[20000 characters cut from the start; the last 30000 follow; a foreground call keeps no log: run the command with run_in_background to keep all of its output]\n") {
		t.Errorf("long output: %.100q", text)
	}

	// Background: an id at once, then bash_output with wait_seconds.
	text, isErr = c.call("bash", map[string]any{"command": "sleep 1; echo the-expected-line; sleep 300", "run_in_background": true, "description": "waits"})
	if isErr || !strings.HasPrefix(text, "started shell 1 (pid ") {
		t.Fatalf("background bash: %q", text)
	}
	deadline := time.Now().Add(20 * time.Second)
	var got string
	for !strings.Contains(got, "the-expected-line") && time.Now().Before(deadline) {
		out, isErr := c.call("bash_output", map[string]any{"bash_id": "1", "wait_seconds": 5})
		if isErr {
			t.Fatalf("bash_output: %q", out)
		}
		got += out
	}
	if !strings.Contains(got, "the-expected-line") || !strings.Contains(got, "running for") {
		t.Errorf("bash_output never showed the line: %q", got)
	}
	// list_shells: a table to read; the records in structured content.
	lr, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_shells", Arguments: map[string]any{}})
	if err != nil || lr.IsError {
		t.Fatalf("list_shells: %v %v", err, lr)
	}
	var list struct{ Shells []map[string]any }
	b, _ := json.Marshal(lr.StructuredContent)
	if err := json.Unmarshal(b, &list); err != nil || len(list.Shells) != 1 || list.Shells[0]["status"] != "running" ||
		!strings.HasPrefix(fmt.Sprint(list.Shells[0]["session"]), "mcp-") || list.Shells[0]["description"] != "waits" {
		t.Errorf("list_shells: %s", b)
	}
	if text := lr.Content[0].(*mcp.TextContent).Text; !regexp.MustCompile(`(?m)^1 +- +running for [0-9.]+s +sleep 1; echo the-expected-line; sleep 300 +-$`).MatchString(text) {
		t.Errorf("list_shells text: %q", text)
	}
	// The two read-only tools answer with structured content too, which
	// fits the output schema they list.
	outSchemas := map[string]any{}
	for _, tool := range tools.Tools {
		outSchemas[tool.Name] = tool.OutputSchema
	}
	for name, args := range map[string]map[string]any{"list_shells": {}, "bash_output": {"bash_id": "1"}} {
		r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %v", name, err, r)
		}
		checkSchema(t, name, outSchemas[name], r.StructuredContent)
		if b, _ := json.Marshal(r.StructuredContent); !strings.Contains(string(b), `"id":"1"`) {
			t.Errorf("%s: structured content %s", name, b)
		}
	}
	text, isErr = c.call("kill_shell", map[string]any{"shell_id": "1", "grace_seconds": 1})
	if isErr || text != "killed 1: sleep 1; echo the-expected-line; sleep 300" {
		t.Errorf("kill_shell: %q", text)
	}

	// Bad arguments are tool errors with a sentence.
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash_output", map[string]any{"bash_id": "1", "filter": "(unclosed"}, "not a valid regular expression"},
		{"bash_output", map[string]any{"bash_id": "99"}, "no such shell 99"},
		{"kill_shell", map[string]any{"shell_id": "99"}, "no such shell 99"},
		{"kill_shell", map[string]any{"shell_id": "1", "signal": "BOGUS"}, "use TERM, INT, HUP or KILL"},
		{"bash", map[string]any{"command": ""}, "command is empty"},
		{"bash", map[string]any{"command": 42}, "command"},
		{"bash", map[string]any{"command": "echo a\x00b"}, "contains a NUL byte"},
		{"bash", map[string]any{"command": "echo " + strings.Repeat("a", 140000), "run_in_background": true}, "write it to a script"},
		{"kill_shell", map[string]any{"shell_id": "1", "grace_seconds": 1e30}, "grace_seconds"},
	} {
		text, isErr := c.call(tc.tool, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: %q (error %v), want a tool error saying %q", tc.tool, tc.args, text, isErr, tc.want)
		}
	}
}

// checkSchema validates a tool's structured content against the output
// schema it listed, with the JSON Schema library the Go SDK uses.
func checkSchema(t *testing.T, tool string, schema, value any) {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	vb, _ := json.Marshal(value)
	var v any
	_ = json.Unmarshal(vb, &v)
	if v == nil {
		t.Fatalf("%s: no structured content", tool)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("%s: structured content %s does not fit its schema: %v", tool, vb, err)
	}
}

func TestServeWakeNoticeAndSessionEnd(t *testing.T) {
	c := startServe(t, "")
	ctx := context.Background()
	if err := c.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	text, _ := c.call("bash", map[string]any{"command": "sleep 0.5; echo finishing; exit 5", "run_in_background": true})
	if !strings.HasPrefix(text, "started shell 1") {
		t.Fatalf("bash: %q", text)
	}
	select {
	case n := <-c.notices:
		if !strings.Contains(n, "shell 1") || !strings.Contains(n, "exit code 5") || !strings.Contains(n, "finishing") {
			t.Errorf("notice %q", n)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no wake notice after the shell ended by itself")
	}

	// Closing the client ends every shell the server started.
	marker := fmt.Sprintf("%d", 520000+os.Getpid()%10000)
	for i := 0; i < 2; i++ {
		if text, _ := c.call("bash", map[string]any{"command": "sleep " + marker, "run_in_background": true}); !strings.HasPrefix(text, "started shell") {
			t.Fatalf("bash: %q", text)
		}
	}
	waitCount(t, "sleep "+marker, 2, 5*time.Second)
	c.cs.Close()
	waitGone(t, "sleep "+marker, 15*time.Second)
	// The supervisor records the end just after the processes are gone.
	var m map[string]any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		b, _ := os.ReadFile(filepath.Join(c.state, "shells", "2", "meta.json"))
		json.Unmarshal(b, &m)
		if m["status"] != "running" {
			break
		}
	}
	if m["status_line"] != "killed (session ended)" {
		t.Errorf("shell 2 after the session: %v", m["status_line"])
	}
}

func TestServeNoteNotices(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"notify": "note"}}`)
	c := startServe(t, cfg)
	c.call("bash", map[string]any{"command": "exit 7", "run_in_background": true})
	c.call("bash", map[string]any{"command": "sleep 0.3; exit 8", "run_in_background": true})
	// The note comes with the first result after the shell ended.
	var text string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if text, _ = c.call("list_shells", map[string]any{}); strings.Contains(text, "[cshell notice]") {
			break
		}
	}
	if !strings.Contains(text, "[cshell notice] shell 2") || !strings.Contains(text, "exit code 8") {
		t.Errorf("no note after the result: %q", text)
	}
	if text, _ := c.call("list_shells", map[string]any{}); strings.Contains(text, "[cshell notice]") {
		t.Errorf("a note told twice: %q", text)
	}
}

// TestServeSurvivesBadLines speaks JSON-RPC by hand: a line that is not one
// JSON-RPC message gets an error reply, and the server and its shells go on.
func TestServeSurvivesBadLines(t *testing.T) {
	cmd := exec.Command(cshellBin, "--state-dir", t.TempDir(), "serve")
	cmd.Dir = t.TempDir()
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
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
	}
	reply := func() map[string]any {
		t.Helper()
		line, err := out.ReadBytes('\n')
		var m map[string]any
		if err != nil || json.Unmarshal(line, &m) != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	reply()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	marker := fmt.Sprintf("%d", 520000+os.Getpid()%10000)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep ` + marker + `","run_in_background":true}}}`)
	if r := reply(); r["id"] != 2.0 || r["error"] != nil {
		t.Fatalf("bash: %v", r)
	}
	for bad, code := range map[string]float64{
		"hello": -32700, "[]": -32600, `{"jsonrpc":"1.0","id":7,"method":"tools/list"}`: -32600,
		`{"jsonrpc":"2.0","id":8,"method":"x","params":Infinity}`: -32700, "42": -32600,
	} {
		send(bad)
		r := reply()
		if e, _ := r["error"].(map[string]any); e == nil || e["code"] != code {
			t.Errorf("%s: reply %v, want error %v", bad, r, code)
		}
	}
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_shells","arguments":{}}}`)
	if r := reply(); r["id"] != 3.0 || !strings.Contains(fmt.Sprint(r["result"]), "running") {
		t.Errorf("list_shells after the bad lines: %v", r)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after stdin closed: %v", err)
	}
	waitGone(t, "sleep "+marker, 15*time.Second)
}
