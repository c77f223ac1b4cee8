package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/mcptasks"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// How the end of a background shell reaches the model, by shells.notify:
//
//	wake  its task ends, for a client that takes tasks; else a note, and
//	      an MCP log message for a client that set a logging level
//	note  a note: appended to the next tool result
//	none  nothing
//
// A 2025-11-25 client that asks for a task gets one whatever the setting:
// the protocol gives it no other answer.
func (s *server) delivery(req *mcp.CallToolRequest) string {
	switch {
	case mcptasks.Asked(req), s.notify == policy.DefaultNotify && mcptasks.Accepts(req):
		return byTask
	}
	return s.noteOrNone()
}

func (s *server) noteOrNone() string {
	if s.notify == "none" {
		return byNone
	}
	return byNote
}

// waitMine waits, at most taskWait, until the shell id is one of this
// server's: a shell refused a host (or told of a limit) at once may be so
// before its start has returned to the server and been recorded (first
// lines keep the start a moment longer), and its event would be lost.
func (s *server) waitMine(id string) {
	for wait := time.Now().Add(taskWait); ; time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		_, ok := s.mine[id]
		s.mu.Unlock()
		if ok || time.Now().After(wait) {
			return
		}
	}
}

// watchNotices passes on the completion notices of this server's shells
// whose end is told as a note, and asks the user about the hosts they
// were refused (ask.go).
func (s *server) watchNotices(ctx context.Context) {
	start := time.Now()
	_ = s.m.Events(ctx, true, func(n shells.Notice, _ []byte) {
		if n.Refused() {
			if n.ID == "" || n.Session != s.session || !n.Time.After(start) {
				return // a foreground call asks in its own round trips
			}
			go func() {
				s.waitMine(n.ID)
				s.mu.Lock()
				inTask := s.taskAsks[n.ID]
				s.mu.Unlock()
				if inTask || s.canAsk() {
					s.ask(ctx, n, inTask)
				}
			}()
			return
		}
		if n.Told() {
			// A limit acted, or a write was refused, while one of this
			// server's shells runs on:
			// told with the next result, whatever tells its end.
			if n.ID == "" || n.Session != s.session || !n.Time.After(start) {
				return // not a shell this server started or took over
			}
			go func() {
				s.waitMine(n.ID)
				s.mu.Lock()
				if _, ok := s.mine[n.ID]; ok {
					s.pending = append(s.pending, n)
				}
				s.mu.Unlock()
			}()
			return
		}
		if s.notify == "none" {
			return
		}
		s.mu.Lock()
		note := s.mine[n.ID] == byNote && n.EndedAt.After(start)
		if note {
			s.pending = append(s.pending, n)
		}
		ss := s.mcp
		s.mu.Unlock()
		// MCP logging is deprecated as of protocol 2026-07-28 (SEP-2577);
		// the SDK sends it only to a client that set a level, and hosts
		// that do show it to no model. An extra, never the one way.
		if note && s.notify == policy.DefaultNotify && ss != nil {
			_ = ss.Log(ctx, &mcp.LoggingMessageParams{Level: "notice", Logger: "cshell", Data: s.noticeText(n)})
		}
	})
}

// taskPoll is how often the shells of working tasks are looked at.
const taskPoll = 250 * time.Millisecond

// watchTasks ends the task of each background shell that ended: it
// completes with the notice when the shell ended by itself (or by its
// timeout or a limit), and is cancelled when something stopped it.
func (s *server) watchTasks(ctx context.Context) {
	t := time.NewTicker(taskPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, tid := range s.tasks.Working() {
			s.finishTask(tid)
		}
	}
}

// finishTask ends the task of a background shell that ended, and
// returns the shell's record (nil when it is gone).
func (s *server) finishTask(tid string) *shells.Meta {
	id, ok := strings.CutPrefix(tid, taskPrefix)
	if !ok {
		return nil // a foreground call: it ends its task itself
	}
	n, meta, err := s.m.EndNotice(id)
	switch {
	case errors.Is(err, shells.ErrNotFound): // its record is gone (cshell clean)
		s.tasks.Cancel(tid, "its record is gone")
	case err != nil: // still running, or unreadable for now
	case meta.Status == shells.StatusKilled && meta.LimitHit == "":
		s.tasks.Cancel(tid, meta.StatusLine)
	default:
		s.tasks.Complete(tid, s.noticeResult(n, meta), s.describeShell(meta))
	}
	return meta
}

// cancelTask stops the work of a task a client cancelled: a background
// shell gets TERM and the default grace (as kill_shell), a foreground call
// is stopped.
func (s *server) cancelTask(tid string) {
	if id, ok := strings.CutPrefix(tid, taskPrefix); ok {
		if meta, err := s.find(id); err == nil {
			_, _ = s.m.Kill(context.Background(), meta.ID, syscall.SIGTERM, shells.DefaultGrace)
		}
		return
	}
	s.mu.Lock()
	cancel := s.calls[tid]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// describe is a working task's status message, asked at each poll: a
// shell found ended ends its task there and then.
func (s *server) describe(tid string) string {
	if id, ok := strings.CutPrefix(tid, taskPrefix); ok {
		s.mu.Lock()
		if s.adopted[id] && s.mine[id] == byNote {
			s.mine[id] = byTask // a shell taken over whose task the client polls: its end is told there
		}
		s.mu.Unlock()
	}
	meta := s.finishTask(tid)
	if meta == nil {
		return ""
	}
	return s.describeShell(meta)
}

// describeShell is "shell 3: running for 12s; exposed 127.0.0.1:5173 -> 5173".
func (s *server) describeShell(meta *shells.Meta) string {
	text := fmt.Sprintf("shell %s: %s", meta.ID, meta.StatusLine)
	for _, e := range meta.Exposed {
		text += fmt.Sprintf("; exposed %s -> %d", e.Listen, e.Port)
	}
	return text
}

// noticeText is a notice as the model reads it: id, name, command, how
// it ended, its log and its last lines.
func (s *server) noticeText(n shells.Notice) string {
	var sb strings.Builder
	if n.Told() {
		fmt.Fprintf(&sb, "shell %s (%s): %s", n.ID, escape.Line(n.Command), escape.Line(n.Detail))
		return sb.String()
	}
	code := "?"
	if n.ExitCode != nil {
		code = strconv.Itoa(*n.ExitCode)
	}
	fmt.Fprintf(&sb, "shell %s", n.ID)
	if n.Name != "" {
		fmt.Fprintf(&sb, " %q", escape.Line(n.Name))
	}
	fmt.Fprintf(&sb, " (%s) %s; exit code %s", escape.Line(n.Command), n.StatusLine, code)
	if n.Signal != "" {
		fmt.Fprintf(&sb, ", signal %s", n.Signal)
	}
	fmt.Fprintf(&sb, ", runtime %.1fs", n.RuntimeSeconds)
	if meta, err := s.m.Find(n.ID); err == nil && meta.Log != "" {
		fmt.Fprintf(&sb, "; log: %s", meta.Log)
	}
	if len(n.LastLines) > 0 {
		sb.WriteString("; last lines:\n" + escape.Output(escape.Strip(strings.Join(n.LastLines, "\n")), false))
	}
	return sb.String()
}

// EndOfShell is the structured content of a background shell's task
// result.
type EndOfShell struct {
	ID             string   `json:"id"`
	Name           string   `json:"name"`
	Command        string   `json:"command"`
	Status         string   `json:"status"`
	StatusLine     string   `json:"status_line"`
	ExitCode       *int     `json:"exit_code"`
	Signal         string   `json:"signal"`
	RuntimeSeconds float64  `json:"runtime_seconds"`
	Log            string   `json:"log"`
	LastLines      []string `json:"last_lines"`
}

// noticeResult is the result a background shell's task completes with:
// the notice, an error unless the command exited with 0.
func (s *server) noticeResult(n shells.Notice, meta *shells.Meta) *mcp.CallToolResult {
	lines := make([]string, len(n.LastLines))
	for i, l := range n.LastLines {
		lines[i] = escape.Output(escape.Strip(l), false)
	}
	ok := meta.Status == shells.StatusExited && meta.ExitCode != nil && *meta.ExitCode == 0
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: s.noticeText(n)}},
		StructuredContent: EndOfShell{ID: meta.ID, Name: meta.Name, Command: escape.Line(meta.Command), Status: meta.Status,
			StatusLine: meta.StatusLine, ExitCode: meta.ExitCode, Signal: meta.Signal, RuntimeSeconds: meta.RuntimeSeconds,
			Log: meta.Log, LastLines: lines},
		IsError: !ok,
	}
}
