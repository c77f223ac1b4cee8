// Package mcpserver serves cshell's shells to an agent host as Model
// Context Protocol tools over stdio: bash (foreground or background),
// bash_output, kill_shell and list_shells. It needs only the public API of
// shells; each server is a session of its own, and its shells end when it
// ends. Safe for concurrent use by the SDK's handlers.
package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// maxToolOutput bounds what a foreground bash call returns.
const maxToolOutput = 30000

// defaultToolTimeout bounds a foreground bash call that names no timeout:
// a tool call must come back.
const defaultToolTimeout = 120 * time.Second

// Options is one `cshell serve`: the policy every tool call gets.
type Options struct {
	Run     shells.RunOptions // Isolation, FS (workdir, rw, ro, hide), AllowHosts, Config
	Version string
	In      io.ReadCloser
	Out     io.WriteCloser
}

// server serves the shells tools to one MCP client. Its shells form their
// own session, owned by this process: when it ends, however it ends, they
// end too (recorded "killed (session ended)").
type server struct {
	m       *shells.Manager
	o       Options
	session string
	notify  string

	mu      sync.Mutex
	mine    map[string]bool // ids of the shells this server started
	pending []shells.Notice // for notify "note": told with the next result
	mcp     *mcp.ServerSession
}

// BashArgs are the bash tool's arguments.
type BashArgs struct {
	Command         string   `json:"command" jsonschema:"the shell command line, run with bash -c in a sandbox: the working directory is writable, the rest of the filesystem read-only, secrets hidden, network only to allowed hosts"`
	Timeout         float64  `json:"timeout,omitempty" jsonschema:"seconds before the command is stopped (TERM, then KILL); foreground default 120, background none"`
	RunInBackground bool     `json:"run_in_background,omitempty" jsonschema:"start a long-running command (dev server, watcher, long build) and return its shell id at once; read its output with bash_output and stop it with kill_shell when done"`
	Expose          []string `json:"expose,omitempty" jsonschema:"ports of the command's server to reach from this machine: PORT or HOST:PORT (background only)"`
	Description     string   `json:"description,omitempty" jsonschema:"a few words on what the command does, shown in list_shells"`
}

// OutputArgs are the bash_output tool's arguments.
type OutputArgs struct {
	BashID      string  `json:"bash_id" jsonschema:"the shell id (or name) that bash returned"`
	Filter      string  `json:"filter,omitempty" jsonschema:"keep only lines matching this regular expression (RE2)"`
	WaitSeconds float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (at most 60) for new output or the end of the shell"`
	FromByte    *int64  `json:"from_byte,omitempty" jsonschema:"read from this byte of the log instead of the last read position"`
}

// KillArgs are the kill_shell tool's arguments.
type KillArgs struct {
	ShellID      string   `json:"shell_id" jsonschema:"the shell id (or name) to stop"`
	Signal       string   `json:"signal,omitempty" jsonschema:"TERM (default), INT, HUP or KILL"`
	GraceSeconds *float64 `json:"grace_seconds,omitempty" jsonschema:"seconds before everything left is killed (default 10; 0 kills at once)"`
}

// words name the tools' arguments in cshell's sentences.
var words = &shells.Words{
	Expose: "expose", Name: "name",
	ReadFrom: func(id string, from int64) string {
		return fmt.Sprintf(`bash_output {"bash_id": %q, "from_byte": %d}`, id, from)
	},
	Show: func(id string) string { return fmt.Sprintf(`bash_output {"bash_id": %q}`, id) },
}

// ListArgs are the list_shells tool's (no) arguments.
type ListArgs struct{}

// Serve runs the MCP server on the shells of m until the client hangs up
// or ctx ends.
func Serve(ctx context.Context, m *shells.Manager, o Options) error {
	cfg := o.Run.Config
	if cfg == nil {
		cfg = &policy.Config{}
	}
	s := &server{m: m, o: o, session: fmt.Sprintf("mcp-%d", os.Getpid()), notify: cfg.Notify(), mine: map[string]bool{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "cshell", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Shell commands run in a sandbox. Use bash with run_in_background for anything that keeps " +
			"running (dev servers, watchers, long builds); then poll it with bash_output and stop it with kill_shell " +
			"when you are done with it. Everything you start ends when this server ends.",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "bash", Description: "Run a shell command in a rootless sandbox. In the foreground " +
		"(default) it returns the output (the last 30,000 characters) and the exit code. With run_in_background it " +
		"returns a shell id at once: poll it with bash_output, stop it with kill_shell when you no longer need it."}, s.bash)
	mcp.AddTool(srv, &mcp.Tool{Name: "bash_output", Description: "Read a background shell's status and the output " +
		"written since the last read (the first read returns the last 200 lines; at most 64 KiB, the newest), then " +
		"network requests that were refused. wait_seconds waits for new output."}, s.output)
	mcp.AddTool(srv, &mcp.Tool{Name: "kill_shell", Description: "Stop a background shell: the signal goes to its " +
		"whole process group, and after the grace period everything left is killed. Returns once it is gone."}, s.kill)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_shells", Description: "List every shell, running or finished, with its " +
		"id, status, command, log path and exposed ports."}, s.list)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in, out := checkedStdio(o.In, o.Out)
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: in, Writer: out}, nil)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.mcp = ss
	s.mu.Unlock()
	if s.notify != "none" {
		go s.watchNotices(ctx)
	}
	go func() { <-ctx.Done(); ss.Close() }() // a signal ends the session
	err = ss.Wait()
	if ctx.Err() != nil {
		return nil // ended by a signal: as clean an end as a closed stdin
	}
	return err
}

// watchNotices passes on the completion notices of this server's shells.
func (s *server) watchNotices(ctx context.Context) {
	start := time.Now()
	_ = s.m.Events(ctx, true, func(n shells.Notice, _ []byte) {
		s.mu.Lock()
		mine := s.mine[n.ID] && n.EndedAt.After(start)
		ss := s.mcp
		if mine && s.notify == "note" {
			s.pending = append(s.pending, n)
		}
		s.mu.Unlock()
		// MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577) but
		// still served; it is the one way a server can wake an idle host.
		if mine && s.notify == "wake" && ss != nil {
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "cshell", Data: noticeText(n)})
		}
	})
}

func noticeText(n shells.Notice) string {
	var sb strings.Builder
	code := "?"
	if n.ExitCode != nil {
		code = strconv.Itoa(*n.ExitCode)
	}
	fmt.Fprintf(&sb, "shell %s (%s) %s; exit code %s, runtime %.1fs", n.ID, shells.Sanitize(n.Command), n.StatusLine, code, n.RuntimeSeconds)
	if len(n.LastLines) > 0 {
		sb.WriteString("; last lines:\n" + shells.Visible(strings.Join(n.LastLines, "\n"), false))
	}
	return sb.String()
}

// result is a text result, with pending "note" notices after it.
func (s *server) result(text string) *mcp.CallToolResult {
	s.mu.Lock()
	notes := s.pending
	s.pending = nil
	s.mu.Unlock()
	for _, n := range notes {
		text += "\n[cshell notice] " + noticeText(n)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// toolError is a tool error: a sentence for the model, never a protocol failure.
func toolError(err error) (*mcp.CallToolResult, any, error) {
	r := &mcp.CallToolResult{}
	r.SetError(err)
	return r, nil, nil
}

func (s *server) bash(ctx context.Context, _ *mcp.CallToolRequest, a BashArgs) (*mcp.CallToolResult, any, error) {
	if strings.TrimSpace(a.Command) == "" {
		return toolError(fmt.Errorf("command is empty: give the shell command line to run"))
	}
	if a.Timeout < 0 || a.Timeout > 24*3600 {
		return toolError(fmt.Errorf("timeout %v: give seconds from 0 to 86400", a.Timeout))
	}
	o := s.o.Run
	o.Command = []string{a.Command}
	o.Timeout = time.Duration(a.Timeout * float64(time.Second))
	o.Session = s.session
	o.Words = words
	if !a.RunInBackground {
		if len(a.Expose) > 0 {
			return toolError(fmt.Errorf("expose is for background shells: set run_in_background"))
		}
		return s.foreground(ctx, o)
	}
	o.Expose = a.Expose
	st, err := s.m.Start(shells.StartOptions{RunOptions: o, OwnerPid: os.Getpid(), Description: a.Description})
	if err != nil {
		return toolError(err)
	}
	meta := st.Meta
	s.mu.Lock()
	s.mine[meta.ID] = true
	s.mu.Unlock()
	if meta.Finished() {
		return s.result(fmt.Sprintf("shell %s %s\n%s", meta.ID, meta.StatusLine, st.Output)), nil, nil
	}
	text := fmt.Sprintf("started shell %s\nlog: %s\n", meta.ID, meta.Log)
	for _, e := range meta.Exposed {
		text += fmt.Sprintf("exposed: %s -> %d\n", e.Listen, e.Port)
	}
	text += fmt.Sprintf("read its output with bash_output {\"bash_id\": %q}; stop it with kill_shell when done", meta.ID)
	return s.result(text), nil, nil
}

// foreground runs a command to its end and returns its output and code.
func (s *server) foreground(ctx context.Context, o shells.RunOptions) (*mcp.CallToolResult, any, error) {
	if o.Timeout == 0 {
		o.Timeout = defaultToolTimeout
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return toolError(err)
	}
	defer devnull.Close()
	out := &tailBuffer{max: maxToolOutput}
	o.Stdin, o.Stdout, o.Stderr = devnull, out, out
	code, err := shells.Run(ctx, o)
	if err != nil {
		return toolError(err)
	}
	text := shells.Visible(out.String(), false)
	if out.cut > 0 {
		text = fmt.Sprintf("[%d characters cut from the start; the last %d follow]\n", out.cut, maxToolOutput) + text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += fmt.Sprintf("exit code %d", code)
	return s.result(text), nil, nil
}

func (s *server) output(ctx context.Context, _ *mcp.CallToolRequest, a OutputArgs) (*mcp.CallToolResult, any, error) {
	if a.WaitSeconds < 0 || a.WaitSeconds > 60 {
		return toolError(fmt.Errorf("wait_seconds %v: give 0 to 60", a.WaitSeconds))
	}
	o := shells.OutputOptions{Wait: time.Duration(a.WaitSeconds * float64(time.Second)), FromByte: -1, Words: words}
	if a.Filter != "" {
		re, err := regexp.Compile(a.Filter)
		if err != nil {
			return toolError(fmt.Errorf("filter %q is not a valid regular expression (RE2): %w", a.Filter, err))
		}
		o.Filter = re
	}
	if a.FromByte != nil {
		if *a.FromByte < 0 {
			return toolError(fmt.Errorf("from_byte %d: give a byte offset of 0 or more", *a.FromByte))
		}
		o.FromByte = *a.FromByte
	}
	meta, err := s.find(a.BashID)
	if err != nil {
		return toolError(err)
	}
	r, err := s.m.Output(ctx, meta.ID, o)
	if err != nil {
		return toolError(err)
	}
	return s.result(r.Text()), nil, nil
}

func (s *server) kill(_ context.Context, _ *mcp.CallToolRequest, a KillArgs) (*mcp.CallToolResult, any, error) {
	sig, err := shells.ParseSignal(cmp.Or(a.Signal, "TERM"))
	if err != nil {
		return toolError(err)
	}
	grace := shells.DefaultGrace
	if a.GraceSeconds != nil {
		if !(*a.GraceSeconds >= 0 && *a.GraceSeconds <= shells.MaxGrace.Seconds()) {
			return toolError(fmt.Errorf("grace_seconds %v: give 0 to %.0f", *a.GraceSeconds, shells.MaxGrace.Seconds()))
		}
		grace = time.Duration(*a.GraceSeconds * float64(time.Second))
	}
	meta, err := s.find(a.ShellID)
	if err != nil {
		return toolError(err)
	}
	r, err := s.m.Kill(meta.ID, sig, grace)
	if err != nil {
		return toolError(err)
	}
	if r.AlreadyFinished {
		return s.result(fmt.Sprintf("shell %s already finished: %s", r.Meta.ID, r.Meta.StatusLine)), nil, nil
	}
	return s.result(r.Text()), nil, nil
}

func (s *server) list(context.Context, *mcp.CallToolRequest, ListArgs) (*mcp.CallToolResult, any, error) {
	list := []*shells.Meta{}
	for _, meta := range s.m.List() {
		if meta.Session == s.session {
			list = append(list, meta)
		}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return toolError(err)
	}
	return s.result(string(b)), nil, nil
}

// find resolves a shell of this server's own session: the others are not
// its to read or stop (and reading one would move its session's place).
func (s *server) find(ref string) (*shells.Meta, error) {
	if _, err := strconv.Atoi(ref); err != nil && ref != "" {
		for _, meta := range s.m.List() {
			if meta.Name == ref && meta.Session == s.session {
				return meta, nil
			}
		}
		return nil, fmt.Errorf("%w named %q among this server's shells; list_shells lists them", shells.ErrNotFound, shells.Sanitize(ref))
	}
	meta, err := s.m.Find(ref)
	if errors.Is(err, shells.ErrNotFound) {
		return nil, fmt.Errorf("%w; list_shells lists them", err)
	}
	if err != nil {
		return nil, err
	}
	if meta.Session != s.session {
		return nil, fmt.Errorf("%w %s among this server's shells; list_shells lists them", shells.ErrNotFound, meta.ID)
	}
	return meta, nil
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
