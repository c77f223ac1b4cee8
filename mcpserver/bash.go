package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/mcptasks"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// maxToolOutput bounds what a foreground bash call returns.
const maxToolOutput = 30000

// defaultToolTimeout bounds a foreground bash call that names no timeout:
// a tool call must come back.
const defaultToolTimeout = 120 * time.Second

// maxForegroundTimeout is where a foreground timeout is refused: a model
// that gives 1000 or more meant milliseconds.
const maxForegroundTimeout = 1000

// Bounds of ready_timeout, in seconds.
const (
	defaultReadyTimeout = 60
	maxReadyTimeout     = 600
)

// progressEvery is how often a foreground call with a progress token
// says how it goes.
const progressEvery = time.Second

// BashArgs are the bash tool's arguments.
type BashArgs struct {
	Command         string   `json:"command" jsonschema:"the shell command line, run with bash -c in a sandbox: the working directory is writable, the rest of the filesystem read-only, secrets hidden, network only to allowed hosts"`
	Timeout         float64  `json:"timeout,omitempty" jsonschema:"seconds before the command is stopped (TERM, then KILL); foreground default 120, background none"`
	RunInBackground bool     `json:"run_in_background,omitempty" jsonschema:"start a long-running command (dev server, watcher, long build) and return its shell id at once; read its output with bash_output and stop it with kill_shell when done"`
	Expose          []string `json:"expose,omitempty" jsonschema:"ports of the command's server to reach from this machine: PORT or HOST:PORT (background only)"`
	Ready           bool     `json:"ready,omitempty" jsonschema:"background only: answer once every exposed port accepts a connection inside the shell"`
	ReadyLog        string   `json:"ready_log,omitempty" jsonschema:"background only: answer once a line of output matches this regular expression (RE2)"`
	ReadyTimeout    float64  `json:"ready_timeout,omitempty" jsonschema:"seconds to wait for ready or ready_log (default 60, at most 600); the shell keeps running after"`
	Cwd             string   `json:"cwd,omitempty" jsonschema:"directory to run in: inside the server's working directory, absolute or relative to it (default: the working directory itself)"`
	Name            string   `json:"name,omitempty" jsonschema:"background only: a name to use instead of the shell id"`
	Description     string   `json:"description,omitempty" jsonschema:"a few words on what the command does, shown in list_shells"`
}

func (s *server) bash(ctx context.Context, req *mcp.CallToolRequest, a BashArgs) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(a.Command) == "" {
		return toolError(fmt.Errorf("command is empty: give the shell command line to run"))
	}
	if a.Timeout < 0 || a.Timeout > 24*3600 {
		return toolError(fmt.Errorf("timeout %v: give seconds from 0 to 86400", a.Timeout))
	}
	if !a.RunInBackground && a.Timeout >= maxForegroundTimeout {
		return toolError(fmt.Errorf("timeout %v: timeout is in seconds, not milliseconds, and a foreground call takes at most %d (default %d); give seconds, or run a longer command with run_in_background",
			a.Timeout, maxForegroundTimeout-1, int(defaultToolTimeout.Seconds())))
	}
	o := s.o.Run
	o.Command = []string{a.Command}
	o.Timeout = time.Duration(a.Timeout * float64(time.Second))
	o.Session = s.session
	o.Words = words
	// A refused request waits while the user is asked: about a background
	// shell with an elicitation of the server's, about a foreground call
	// in its own round trips (not for a 2025-11-25 task: nobody waits on
	// that call to ask).
	tell := s.delivery(req)
	taskAsks := a.RunInBackground && tell == byTask && !mcptasks.Asked(req) && canAskIn(req) // a 2026-07-28 task asks in its inputRequests
	if a.RunInBackground && (s.canAsk() || taskAsks) || !a.RunInBackground && !mcptasks.Asked(req) && canAskIn(req) {
		o.Ask = askHold
	}
	if a.Cwd != "" {
		start, err := policy.StartDir(s.workdir, a.Cwd)
		if err != nil {
			return toolError(fmt.Errorf("cwd %q: %w", a.Cwd, err))
		}
		o.FS.Start = start
	} else {
		o.FS.Start = s.dir() // where the last foreground call left off
	}
	if !a.RunInBackground {
		if len(a.Expose) > 0 || a.Ready || a.ReadyLog != "" || a.Name != "" {
			return toolError(fmt.Errorf("expose, ready, ready_log and name are for background shells: set run_in_background"))
		}
		o.Command, o.Shown = []string{s.tracked(a.Command)}, a.Command
		if mcptasks.Asked(req) { // a 2025-11-25 client asked for a task: it gets one
			return s.foregroundTask(req, o)
		}
		return s.foreground(ctx, req, o), nil, nil
	}
	ready, err := readyRequest(a)
	if err != nil {
		return toolError(err)
	}
	o.Expose, o.Ready = a.Expose, ready
	o.OwnerPid, o.Name, o.Description, o.Reattach = os.Getpid(), a.Name, a.Description, s.reattach
	st, err := s.m.Start(ctx, o)
	if err != nil {
		return toolError(err)
	}
	meta := st.Meta
	s.mu.Lock()
	s.mine[meta.ID] = tell
	s.taskAsks[meta.ID] = taskAsks
	if st.NotReady != nil {
		// Not ready in time (or asked to stop waiting): the shell runs on,
		// and its end is told as a note.
		s.mine[meta.ID] = s.noteOrNone()
	}
	s.mu.Unlock()
	text := strings.TrimSuffix(st.Lines(), "\n")
	// The structured content is run -d --json's answer, made visible as
	// the text is.
	data := st.Answer()
	if data.Output != nil {
		out := escape.Output(escape.Strip(*data.Output), false)
		data.Output = &out
	}
	switch {
	case meta.Finished(): // ended at once, or before it was ready: the answer is its end
		return withData(s.result(text), data), nil, nil
	case st.NotReady != nil:
		r := s.result(text + "\n" + st.NotReady.Error())
		r.IsError = true
		return r, nil, nil
	}
	text += fmt.Sprintf("\nread its output with bash_output {\"bash_id\": %q}; stop it with kill_shell when done", meta.ID)
	if tell == byTask {
		r, err := s.tasks.Start(req, taskPrefix+meta.ID, s.describeShell(meta), text)
		if err != nil {
			return toolError(err)
		}
		return r, nil, nil
	}
	return withData(s.result(text), data), nil, nil
}

// readyRequest checks ready, ready_log and ready_timeout (the plan checks
// the rest).
func readyRequest(a BashArgs) (plan.ReadyRequest, error) {
	if a.ReadyTimeout < 0 || a.ReadyTimeout > maxReadyTimeout {
		return plan.ReadyRequest{}, fmt.Errorf("ready_timeout %v: give seconds from 0 to %d", a.ReadyTimeout, maxReadyTimeout)
	}
	if !a.Ready && a.ReadyLog == "" {
		if a.ReadyTimeout != 0 {
			return plan.ReadyRequest{}, fmt.Errorf("ready_timeout bounds ready and ready_log: set one of them")
		}
		return plan.ReadyRequest{}, nil
	}
	secs := a.ReadyTimeout
	if secs == 0 {
		secs = defaultReadyTimeout
	}
	return plan.ReadyRequest{Ports: a.Ready, Log: a.ReadyLog, Timeout: time.Duration(secs * float64(time.Second))}, nil
}

// foregroundTask runs a foreground call as a task: a 2025-11-25 client
// that asks for one on every call of a tool that takes tasks (the npm
// SDK's callToolStream does) waits for the output by polling.
func (s *server) foregroundTask(req *mcp.CallToolRequest, o shells.RunOptions) (*mcp.CallToolResult, any, error) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.nCalls++
	id := fmt.Sprintf("call-%d", s.nCalls)
	s.calls[id] = cancel
	s.mu.Unlock()
	r, err := s.tasks.Start(req, id, "running in the foreground", "")
	if err != nil {
		cancel()
		return toolError(err)
	}
	go func() {
		defer cancel()
		res := s.runForeground(ctx, nil, o, nil)
		summary := "ended"
		if len(res.Content) > 0 {
			if tc, ok := res.Content[0].(*mcp.TextContent); ok {
				summary = tc.Text[strings.LastIndex(tc.Text, "\n")+1:] // exit code N, or the error
			}
		}
		s.tasks.Complete(id, res, summary)
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
	}()
	return r, nil, nil
}

// progress sends a progress notification every progressEvery: the time
// so far and the last line of output. The stop it returns waits for the
// last one, so that none follows the answer.
func progress(ctx context.Context, ss *mcp.ServerSession, tok any, out *tailBuffer) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		start := time.Now()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			el := time.Since(start).Round(time.Second)
			msg := fmt.Sprintf("running for %s", el)
			if l := out.lastLine(); l != "" {
				msg += ": " + l
			}
			_ = ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: el.Seconds(), Message: msg})
		}
	}()
	return func() { close(done); wg.Wait() }
}

// tailBuffer keeps the last max bytes written and counts what it dropped.
// Safe for the two writers (stdout and stderr) a run may have.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
	cut int
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.cut += over
		t.buf.Next(over)
		rest := append([]byte(nil), t.buf.Bytes()...)
		t.buf.Reset()
		t.buf.Write(rest)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// maxProgressLine bounds the line a progress notification quotes.
const maxProgressLine = 200

// lastLine is the last line of output that has something on it, made
// visible, its end kept when it is long.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	b := bytes.TrimRight(t.buf.Bytes(), "\r\n\t ")
	if i := bytes.LastIndexAny(b, "\r\n"); i >= 0 {
		b = b[i+1:]
	}
	l := string(b)
	t.mu.Unlock()
	l = strings.TrimSpace(escape.Output(escape.Strip(l), false))
	if utf8.RuneCountInString(l) > maxProgressLine {
		r := []rune(l)
		l = "…" + string(r[len(r)-maxProgressLine:])
	}
	return l
}
