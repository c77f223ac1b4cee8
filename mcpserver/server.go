// Package mcpserver serves cshell's shells to an agent host as Model
// Context Protocol tools over stdio: bash (foreground or background),
// bash_output, kill_shell and list_shells, for clients of every protocol
// generation the Go SDK speaks (initialize of 2025-06-18 and 2025-11-25,
// server/discover and per-request _meta of 2026-07-28). A background
// shell's end reaches the model as the end of its task where the client
// takes tasks (package mcptasks), else appended to the next tool result.
// It needs only the public API of shells; each server is a session of its
// own, and its shells end when it ends. Safe for concurrent use by the
// SDK's handlers.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/mcptasks"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// Options is one `cshell serve`: the policy every tool call gets.
type Options struct {
	Run     shells.RunOptions // Isolation, FS (workdir, rw, ro, hide), AllowHosts, Config
	Session string            // the session of the server's shells; "" is mcp-PID
	Version string
	In      io.ReadCloser
	Out     io.WriteCloser
}

// How a background shell's end is told, chosen when it starts.
const (
	byTask = "task" // its task ends (mcptasks)
	byNote = "note" // appended to the next tool result
	byNone = "none"
)

// server serves the shells tools to one MCP client. Its shells form their
// own session, owned by this process: when it ends, however it ends, they
// end too (recorded "killed (session ended)").
type server struct {
	m       *shells.Manager
	o       Options
	session string
	notify  string // the configuration's shells.notify
	workdir string // the server's working directory, resolved
	tasks   *mcptasks.Tasks
	ctx     context.Context // the server's life

	mu       sync.Mutex
	mine     map[string]string // the shells this server started: how each one's end is told
	pending  []shells.Notice   // told with the next result
	calls    map[string]context.CancelFunc
	nCalls   int             // foreground calls run as tasks
	asking   map[string]bool // hosts the user is being asked about
	taskAsks map[string]bool // background shells whose task asks its client (2026-07-28)
	runs     map[string]*fgRun
	mcp      *mcp.ServerSession
	cwd      string          // where the last foreground call ended ("": the working directory)
	adopted  map[string]bool // shells an earlier server of the session started, taken over
	reattach time.Duration   // how long its background shells outlive it (shells.reattachSeconds; 0 for an mcp-PID session)
	dirMark  string          // marks the line that tells it (cwd.go)

	slots   chan struct{} // one a foreground call that runs (shells.maxForegroundCalls)
	waiting atomic.Int64  // foreground calls waiting for a slot
	warm    *shells.Warm  // a sandbox made ahead for the next foreground call
}

// words name the tools' arguments in cshell's sentences.
var words = &plan.Words{
	Expose: "expose", Name: "name", ReadyLog: "ready_log",
	ReadFrom: func(id string, from int64) string {
		return fmt.Sprintf(`bash_output {"bash_id": %q, "from_byte": %d}`, id, from)
	},
	Show: func(id string) string { return fmt.Sprintf(`bash_output {"bash_id": %q}`, id) },
	// A model cannot allow a host; its user can, and it should ask.
	Allow: func(session, pattern string) string {
		return fmt.Sprintf("if the task needs it, ask the user to allow it by running: cshell allow --session %s %s", session, pattern)
	},
}

// Serve runs the MCP server on the shells of m until the client hangs up
// or ctx ends.
func Serve(ctx context.Context, m *shells.Manager, o Options) error {
	cfg := o.Run.Config
	if cfg == nil {
		cfg = &policy.Config{}
	}
	fsys, err := policy.NewFilesystem(o.Run.FS)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	session := o.Session
	var reattach time.Duration
	if session == "" {
		session = fmt.Sprintf("mcp-%d", os.Getpid()) // no other server has it: nothing to outlive this one for
	} else {
		reattach = time.Duration(cfg.ReattachSeconds()) * time.Second
	}
	s := &server{m: m, o: o, session: session, notify: cfg.Notify(), workdir: fsys.Workdir,
		ctx: ctx, mine: map[string]string{}, calls: map[string]context.CancelFunc{}, asking: map[string]bool{}, taskAsks: map[string]bool{}, runs: map[string]*fgRun{}, dirMark: newDirMark(),
		adopted: map[string]bool{}, reattach: reattach,
		slots: make(chan struct{}, cfg.MaxForegroundCalls())}
	if cfg.Warm() {
		s.warm = shells.NewWarm()
		defer s.warm.Close()
	}
	s.o.Run.Warm = s.warm
	var taskTools []string
	caps := &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}}
	if s.notify == policy.DefaultNotify { // wake: a background shell may be a task
		taskTools = []string{"bash"}
		mcptasks.Declare(caps)
	}
	s.tasks = mcptasks.New(mcptasks.Options{Cancel: s.cancelTask, Describe: s.describe, Tools: taskTools})
	srv := mcp.NewServer(&mcp.Implementation{Name: "cshell", Title: "cshell", Version: o.Version}, &mcp.ServerOptions{
		Instructions: instructions(reattach),
		Capabilities: caps,
	})
	s.addTools(srv)
	if err := s.tasks.Install(srv); err != nil {
		return err
	}
	s.takeOver(ctx)

	// stdin's end ends the server at once, whatever the SDK still has to
	// write to a client that does not read.
	in, out := checkedStdio(o.In, o.Out, cancel)
	ss, err := srv.Connect(ctx, s.tasks.Transport(&mcp.IOTransport{Reader: in, Writer: out}), nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.mcp = ss
	s.mu.Unlock()
	go s.watchNotices(ctx)
	go s.watchTasks(ctx)
	// The first call's sandbox, made while the client starts: a call
	// whose plan differs (a client that can be asked, another cwd's
	// limits) starts cold, and the next is made for it.
	first := s.o.Run
	first.Session, first.Words, first.FS.Start = s.session, words, s.dir()
	s.warm.Prepare(first)
	go func() { <-ctx.Done(); ss.Close() }() // a signal ends the session
	waited := make(chan error, 1)
	go func() { waited <- ss.Wait() }()
	select {
	case err = <-waited:
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		return nil // a signal or stdin's end: a clean end
	}
	return err
}

func ptr[T any](v T) *T { return &v }

// instructions are the server's instructions to the model.
func instructions(reattach time.Duration) string {
	s := "Shell commands run in a sandbox. Use bash with run_in_background for anything that keeps " +
		"running (dev servers, watchers, long builds); then poll it with bash_output and stop it with kill_shell " +
		"when you are done with it. Foreground calls keep the working directory a cd left them in (inside the " +
		"server's working directory), nothing else: variables do not carry over, and jobs started with & end " +
		"with their call. Timeouts are in seconds."
	if reattach > 0 {
		return s + fmt.Sprintf(" Background shells outlive this server by %s: a server restarted for the same session "+
			"in that time takes them over, with their ids, output and tasks.", reattach)
	}
	return s + " Everything you start ends when this server ends."
}

// takeOver makes this server the owner of the running shells an earlier
// server of its session left (a host's reload): they are listed, read and
// stopped as its own, their ends told as a note, or by their task once
// the client asks for it (tasks/get of the id it holds).
func (s *server) takeOver(ctx context.Context) {
	if s.reattach == 0 {
		return
	}
	for _, meta := range s.m.Adopt(ctx, s.session) {
		s.mu.Lock()
		s.mine[meta.ID] = s.noteOrNone()
		s.adopted[meta.ID] = true
		s.mu.Unlock()
		if s.notify == policy.DefaultNotify {
			_ = s.tasks.Resume(taskPrefix+meta.ID, s.describeShell(meta))
		}
	}
}

// addTools registers the four tools, with what hosts act on: titles,
// annotations (which may run in parallel or in plan modes, which destroy)
// and the output schemas of the two that answer with data.
func (s *server) addTools(srv *mcp.Server) {
	addTool(srv, &mcp.Tool{Name: "bash", Title: "Run a shell command in a sandbox",
		Description: "Run a shell command in a rootless sandbox. In the foreground (default) it returns the output " +
			"(the last 30,000 characters) and the exit code. With run_in_background it returns a shell id at once " +
			"(ready waits until its exposed ports accept, ready_log until a line of output matches): poll it with " +
			"bash_output, stop it with kill_shell when you no longer need it; you are told when it ends by itself.",
		Annotations: &mcp.ToolAnnotations{Title: "Run a shell command in a sandbox", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, s.bash)
	addTool(srv, &mcp.Tool{Name: "bash_output", Title: "Read a background shell's output",
		Description: "Read a background shell's status and the output written since the last read (the first read " +
			"returns the last 200 lines; at most 64 KiB, the newest), then network requests that were refused. " +
			"wait_seconds waits for new output.",
		Annotations:  &mcp.ToolAnnotations{Title: "Read a background shell's output", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		OutputSchema: outputSchema(),
	}, s.output)
	addTool(srv, &mcp.Tool{Name: "kill_shell", Title: "Stop a background shell",
		Description: "Stop a background shell: the signal goes to its whole process group, and after the grace " +
			"period everything left is killed. Returns once it is gone.",
		Annotations: &mcp.ToolAnnotations{Title: "Stop a background shell", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, s.kill)
	addTool(srv, &mcp.Tool{Name: "list_shells", Title: "List the shells",
		Description: "List every shell this server started, running or finished, with its id, status, command, " +
			"log path and exposed ports.",
		Annotations:  &mcp.ToolAnnotations{Title: "List the shells", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
		OutputSchema: listSchema(),
	}, s.list)
}

// result is a text result, with pending notices after it.
func (s *server) result(text string) *mcp.CallToolResult {
	s.mu.Lock()
	notes := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, n := range notes {
		text += "\n[cshell notice] " + s.noticeText(n)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// toolError is a tool error: a sentence for the model, never a protocol failure.
func toolError(err error) (*mcp.CallToolResult, any, error) {
	r := &mcp.CallToolResult{}
	// A sentence may echo what the client or a shell wrote (a cwd, a
	// name): made visible as output is.
	r.SetError(errors.New(escape.Line(err.Error())))
	return r, nil, nil
}

// taskPrefix starts the id of a background shell's task: shell-3 is
// shell 3, and every tool that takes a shell id takes it.
const taskPrefix = "shell-"

// find resolves a shell of this server's own session: the others are not
// its to read or stop (and reading one would move its session's place).
func (s *server) find(ref string) (*shells.Meta, error) {
	if id, ok := strings.CutPrefix(ref, taskPrefix); ok {
		if _, err := strconv.Atoi(id); err == nil {
			ref = id // shell-7 is shell 7's task, kept or not: no name reads so
		}
	}
	if _, err := strconv.Atoi(ref); err != nil && ref != "" {
		for _, meta := range s.m.List() {
			if meta.Name == ref && meta.Session == s.session {
				return meta, nil
			}
		}
		return nil, fmt.Errorf("%w named %q among this server's shells; list_shells lists them", shells.ErrNotFound, escape.Line(ref))
	}
	// Another session's shell is no shell of this server's, said in the
	// same words as an id that never was: no oracle of other sessions.
	notHere := fmt.Errorf("%w %s among this server's shells; list_shells lists them", shells.ErrNotFound, escape.Line(ref))
	meta, err := s.m.Find(ref)
	switch {
	case errors.Is(err, shells.ErrNotFound):
		return nil, notHere
	case err != nil:
		return nil, err
	case meta.Session != s.session:
		return nil, notHere
	}
	return meta, nil
}
