//go:build unix

package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// patience bounds every wait of these tests for something that must
// happen: long, as other tests may share the machine's two cores. No
// test asserts on how long anything took.
const patience = 60 * time.Second

// testServer is one Serve of the package, in this process, on shells in
// a state dir of its own, with process isolation (no namespaces, no
// privilege).
type testServer struct {
	t       *testing.T
	m       *shells.Manager
	session string
	dir     string // the server's working directory, resolved
	home    string
	served  chan error // Serve's return
}

// resolvedTemp is a temporary directory as the kernel names it.
func resolvedTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startServer runs Serve with cfg (nil: the defaults) on in and out, the
// client's ends of which the caller holds. Cleanup waits for Serve's end
// (the caller closes its ends first), then stops whatever shell is left
// and waits for the supervisors to go.
func startServer(t *testing.T, cfg *policy.Config, in io.ReadCloser, out io.WriteCloser, after ...*testServer) *testServer {
	t.Helper()
	ts := &testServer{t: t, home: resolvedTemp(t), dir: resolvedTemp(t), session: "mcptest-" + strconv.Itoa(os.Getpid()),
		served: make(chan error, 1)}
	if len(after) > 0 { // a server restarted: the same state dir, session and directories
		ts.m, ts.home, ts.dir = after[0].m, after[0].home, after[0].dir
	} else {
		state := resolvedTemp(t)
		m, err := shells.Open(state, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ts.stopShells(); m.Close() })
		ts.m = m
	}
	m := ts.m
	if cfg == nil {
		cfg = &policy.Config{}
	}
	o := Options{
		Run: shells.RunOptions{Request: plan.Request{Isolation: container.Process, Config: cfg,
			FS: policy.FilesystemRequest{Home: ts.home, Cwd: ts.dir, Config: cfg}}},
		Session: ts.session, Version: "test", In: in, Out: out,
	}
	go func() { ts.served <- Serve(context.Background(), m, o) }()
	t.Cleanup(func() {
		if ended, err := ts.wait(); !ended {
			t.Errorf("Serve did not end when its client hung up")
		} else if err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// wait waits for Serve's end and returns what it returned; false when
// it did not end within patience.
func (ts *testServer) wait() (bool, error) {
	select {
	case err := <-ts.served:
		ts.served <- err // for the next to ask
		return true, err
	case <-time.After(patience):
		return false, nil
	}
}

// stopShells kills what runs of the server's session and waits until the
// supervisors of every shell have gone, so that no process outlives the
// test and the state dir can be removed.
func (ts *testServer) stopShells() {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if _, err := ts.m.KillSession(ctx, ts.session, syscall.SIGKILL, 0); err != nil {
		ts.t.Errorf("kill the test's shells: %v", err)
	}
	for _, meta := range ts.m.List() {
		if meta.Supervisor <= 0 {
			continue
		}
		waitFor(ts.t, fmt.Sprintf("supervisor %d of shell %s to end", meta.Supervisor, meta.ID), func() bool {
			return !alive(meta.Supervisor)
		})
	}
}

// alive reports whether a process exists (and is no zombie, on Linux).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist) || !procMounted()
	}
	// pid (comm) S ...: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 {
		return s[i+2] != 'Z'
	}
	return true
}

func procMounted() bool {
	_, err := os.Stat("/proc/self/stat")
	return err == nil
}

// waitFor polls cond until it holds, failing the test past patience.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(patience); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// sdkClient is the Go SDK's client connected to a testServer.
type sdkClient struct {
	*testServer
	cs       *mcp.ClientSession
	progress chan *mcp.ProgressNotificationParams
	logs     chan string
	hangUp   func() // the client goes: the server ends
}

// clientOptions are what a test changes of the SDK client.
type clientOptions struct {
	version string      // "" is the SDK's newest
	elicit  bool        // declare elicitation
	after   *testServer // a server restarted after this one (its state dir and session)
}

// connect starts a server and connects the SDK's client to it through
// cshell's stdio transport.
func connect(t *testing.T, co clientOptions) *sdkClient {
	t.Helper()
	inR, inW := io.Pipe()   // client -> server
	outR, outW := io.Pipe() // server -> client
	var after []*testServer
	if co.after != nil {
		after = append(after, co.after)
	}
	ts := startServer(t, nil, inR, outW, after...)
	c := &sdkClient{testServer: ts, progress: make(chan *mcp.ProgressNotificationParams, 256), logs: make(chan string, 64)}
	opts := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			select {
			case c.progress <- r.Params:
			default:
			}
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			select {
			case c.logs <- fmt.Sprint(r.Params.Data):
			default:
			}
		},
	}
	if co.elicit {
		opts.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpserver-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: co.version})
	if err != nil {
		inW.Close()
		outR.Close()
		t.Fatalf("connect: %v", err)
	}
	c.cs = cs
	// A client that hangs up as it should: its requests end, then it
	// stops reading once the server is gone.
	c.hangUp = sync.OnceFunc(func() { inW.Close(); ts.wait(); cs.Close() })
	t.Cleanup(c.hangUp)
	return c
}

// callResult calls a tool and fails the test on a protocol error.
func (c *sdkClient) callResult(ctx context.Context, name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	return r
}

// call calls a tool and returns its text and whether it is a tool error.
func (c *sdkClient) call(name string, args any) (string, bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
	defer cancel()
	r := c.callResult(ctx, name, args)
	return text(r), r.IsError
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, r *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// rawClient speaks JSON-RPC lines to a testServer itself: for what the
// SDK's client cannot send (2025-11-25 tasks, hostile input).
type rawClient struct {
	*testServer
	w     io.WriteCloser
	lines chan map[string]json.RawMessage // every line the server wrote
	bad   chan string                     // lines that were not JSON objects

	mu      sync.Mutex
	byID    map[string]map[string]json.RawMessage
	notes   []map[string]json.RawMessage
	arrived chan struct{}
}

// connectRaw starts a server for a client that writes its own lines.
func connectRaw(t *testing.T, cfg *policy.Config) *rawClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ts := startServer(t, cfg, inR, outW)
	c := &rawClient{testServer: ts, w: inW, byID: map[string]map[string]json.RawMessage{}, arrived: make(chan struct{}, 1),
		bad: make(chan string, 16)}
	go func() {
		rd := bufio.NewReader(outR)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 {
				c.take(line)
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close(); ts.wait(); outR.Close() })
	return c
}

func (c *rawClient) take(line []byte) {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		select {
		case c.bad <- string(line):
		default:
		}
		return
	}
	c.mu.Lock()
	id, hasID := m["id"]
	_, hasMethod := m["method"]
	switch {
	case hasID && !hasMethod:
		c.byID[string(id)] = m
	default:
		c.notes = append(c.notes, m)
	}
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
}

// send writes one line.
func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("write %.80q: %v", line, err)
	}
}

// request writes a request and returns its answer.
func (c *rawClient) request(id, method string, params any) map[string]json.RawMessage {
	c.t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(string(b))
	return c.answer(id)
}

// answer waits for the answer to id (as written by the server).
func (c *rawClient) answer(id string) map[string]json.RawMessage {
	c.t.Helper()
	deadline := time.After(2 * patience)
	for {
		c.mu.Lock()
		m, ok := c.byID[id]
		delete(c.byID, id)
		c.mu.Unlock()
		if ok {
			return m
		}
		select {
		case <-c.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("no answer to request %s", id)
		}
	}
}

// notification waits for a notification of method that satisfies ok.
func (c *rawClient) notification(method string, ok func(params map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(2 * patience)
	seen := 0
	for {
		c.mu.Lock()
		notes := c.notes[seen:]
		seen = len(c.notes)
		c.mu.Unlock()
		for _, n := range notes {
			var p map[string]any
			_ = json.Unmarshal(n["params"], &p)
			if string(n["method"]) == strconv.Quote(method) && ok(p) {
				return p
			}
		}
		select {
		case <-c.arrived:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			c.t.Fatalf("no %s notification came", method)
		}
	}
}

// initialize opens the session with initialize at version.
func (c *rawClient) initialize(version string) map[string]any {
	c.t.Helper()
	a := c.request(`"init"`, "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	var res map[string]any
	if err := json.Unmarshal(a["result"], &res); err != nil {
		c.t.Fatalf("initialize: %s", a["error"])
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	return res
}

// result decodes an answer's result into v, failing on an error answer.
func result(t *testing.T, a map[string]json.RawMessage, v any) {
	t.Helper()
	if e, ok := a["error"]; ok {
		t.Fatalf("error answer: %s", e)
	}
	if err := json.Unmarshal(a["result"], v); err != nil {
		t.Fatalf("result %s: %v", a["result"], err)
	}
}
