package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/shells"
)

// OutputArgs are the bash_output tool's arguments.
type OutputArgs struct {
	BashID      string  `json:"bash_id" jsonschema:"the shell id (or name, or the id of its task) that bash returned"`
	Filter      string  `json:"filter,omitempty" jsonschema:"keep only lines matching this regular expression (RE2)"`
	WaitSeconds float64 `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (at most 60) for new output or the end of the shell"`
	FromByte    *int64  `json:"from_byte,omitempty" jsonschema:"read from this byte of the log instead of the last read position"`
}

// KillArgs are the kill_shell tool's arguments.
type KillArgs struct {
	ShellID      string   `json:"shell_id" jsonschema:"the shell id (or name, or the id of its task) to stop"`
	Signal       string   `json:"signal,omitempty" jsonschema:"TERM (default), INT, HUP or KILL"`
	GraceSeconds *float64 `json:"grace_seconds,omitempty" jsonschema:"seconds before everything left is killed (default 10; 0 kills at once)"`
}

// ListArgs are the list_shells tool's (no) arguments.
type ListArgs struct{}

// ShellList is list_shells' structured answer: the ps --json records.
type ShellList struct {
	Shells []*shells.Meta `json:"shells"`
}

// The output schemas, made once from the types the answers are made of,
// when a server first needs them: not at every start of the binary
// (a shell's start runs it twice, none of them a server).
var (
	outputSchema = sync.OnceValue(outSchema[shells.OutputResult])
	listSchema   = sync.OnceValue(outSchema[ShellList])
)

// outSchema is T's schema as an output schema: one type a property, none
// where a value may be null.
func outSchema[T any]() *jsonschema.Schema {
	s := mustSchema[T]()
	oneType(s, true)
	return s
}

func mustSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the output schema of %T: %v", *new(T), err)) // a programming error, caught by every test
	}
	return s
}

// withData is a result with its structured content; a tool error has
// none, which the protocol allows whatever the output schema.
func withData(r *mcp.CallToolResult, data any) *mcp.CallToolResult {
	r.StructuredContent = data
	return r
}

func (s *server) output(ctx context.Context, _ *mcp.CallToolRequest, a OutputArgs) (*mcp.CallToolResult, any, error) {
	if a.WaitSeconds < 0 || a.WaitSeconds > 60 {
		return toolError(fmt.Errorf("wait_seconds %v: give 0 to 60", a.WaitSeconds))
	}
	o := shells.OutputOptions{Wait: time.Duration(a.WaitSeconds * float64(time.Second)), FromByte: -1, Words: words, Plain: true}
	if a.Filter != "" {
		re, err := plan.CompileRegexp("filter", a.Filter)
		if err != nil {
			return toolError(err)
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
	// The structured form is made visible as the text is: a model, or a
	// host that shows it, meets no terminal sequence either way.
	data := *r
	data.Output = escape.Output(escape.Strip(r.Output), false)
	return withData(s.result(r.Text()), &data), nil, nil
}

func (s *server) kill(ctx context.Context, _ *mcp.CallToolRequest, a KillArgs) (*mcp.CallToolResult, any, error) {
	sig, err := shells.ParseSignal(cmp.Or(a.Signal, "TERM"))
	if err != nil {
		return toolError(err)
	}
	if !shells.GracefulStop && a.Signal != "" && sig != syscall.SIGKILL {
		return toolError(fmt.Errorf("signal %s: %s", a.Signal, strings.Replace(shells.NoGracefulStop, "--signal", "signal", 1)))
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
	r, err := s.m.Kill(ctx, meta.ID, sig, grace)
	if err != nil {
		return toolError(err)
	}
	if r.AlreadyFinished {
		return s.result(fmt.Sprintf("shell %s already finished: %s", r.Meta.ID, r.Meta.StatusLine)), nil, nil
	}
	// Stopped by the model: no notice, and its task (if it has one) is
	// cancelled, not completed.
	s.tasks.Cancel(taskPrefix+r.Meta.ID, "stopped with kill_shell: "+r.Meta.StatusLine)
	return s.result(r.Text()), nil, nil
}

func (s *server) list(context.Context, *mcp.CallToolRequest, ListArgs) (*mcp.CallToolResult, any, error) {
	list := ShellList{Shells: []*shells.Meta{}}
	for _, meta := range s.m.List() {
		if meta.Session == s.session {
			// What a shell's command or description holds is shown as
			// output is: no terminal sequence, no direction change.
			m := *meta
			m.Command, m.Description = escape.Line(m.Command), escape.Line(m.Description)
			// A working directory's name, a log path and a status line
			// may hold what its creator chose: the same.
			m.Workdir, m.Log, m.StatusLine = escape.Line(m.Workdir), escape.Line(m.Log), escape.Line(m.StatusLine)
			list.Shells = append(list.Shells, &m)
		}
	}
	return withData(s.result(shellTable(list.Shells)), list), nil, nil
}

// shellTable is list_shells' text: a line a shell, its record's JSON left
// to the structured content.
func shellTable(list []*shells.Meta) string {
	if len(list) == 0 {
		return "no shells"
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tCOMMAND\tEXPOSED")
	for _, m := range list {
		var exposed []string
		for _, e := range m.Exposed {
			exposed = append(exposed, fmt.Sprintf("%s->%d", e.Listen, e.Port))
		}
		cmd := m.Command
		if r := []rune(cmd); len(r) > 60 {
			cmd = string(r[:59]) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.ID, cmp.Or(m.Name, "-"), m.StatusLine, cmd, cmp.Or(strings.Join(exposed, ","), "-"))
	}
	tw.Flush()
	return strings.TrimSuffix(b.String(), "\n")
}
