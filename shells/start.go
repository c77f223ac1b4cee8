package shells

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/plan"
)

// Started is the answer to a background start: the shell's record, its
// output when it ended before the answer, and how the wait for its
// readiness went.
type Started struct {
	Meta   *Meta
	Output string // when it ended before the answer: its last output
	// Waited: a readiness was asked for; the start waited until the shell
	// was ready (ReadyAfter), or gave up (NotReady: ErrNotReady, naming
	// what was not ready, or the context's error; the shell runs on either
	// way), or the shell ended first.
	Waited     bool
	ReadyAfter time.Duration
	NotReady   error
	// Direct: the shell shares this machine's network, so its exposed
	// ports are reached directly, with no relay.
	Direct bool
	// FirstLines are the first lines the shell wrote before the answer (at
	// most firstLinesMax, firstLinesBytes together), made visible with the
	// terminal's sequences removed: a port, a URL, an error.
	FirstLines []string
}

// Bounds of Started.FirstLines.
const (
	firstLinesMax   = 10
	firstLinesBytes = 2 << 10
)

// answerTimeout bounds the wait for the supervisor's word. The answer
// normally comes within earlyWindow plus the sandbox's start.
const answerTimeout = 10 * time.Second

// Start plans the shell (every check), allocates it, starts its
// supervisor and returns once the supervisor says the shell runs or
// ended; with a readiness asked for, once it is ready, or the wait ends
// (its timeout, or ctx). A shell that ended before the answer is
// answered with its end.
func (m *Manager) Start(ctx context.Context, o RunOptions) (*Started, error) {
	o.Purpose = plan.Background
	if o.StateDir == "" {
		o.StateDir = m.path // its shells keep their grants here
	}
	facts := hostFacts(o.FS.Home, nil)
	p, err := plan.New(o.Request, facts)
	if err != nil {
		return nil, err
	}
	defer p.Release() // the supervisor holds the caches in use from its start
	warn(o.Stderr, p.Warnings)
	ls, err := bindExposes(p)
	if err != nil {
		return nil, err
	}
	files, err := listenerFiles(ls)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range files {
			f.Close() // the supervisor has its own copies
		}
	}()
	meta, err := m.allocate(p)
	if err != nil {
		return nil, err
	}
	inherit := files
	if lock := p.CacheLock(); lock != nil {
		inherit = append(slices.Clip(files), lock) // Release closes it
	}
	if err := m.spawn(ctx, meta.ID, p, inherit); err != nil {
		_ = m.dir.RemoveAll(shellFile(meta.ID))
		_ = m.dir.Remove(exposingName + "/" + meta.ID)
		return nil, err
	}
	if meta, err = m.readMeta(meta.ID); err != nil {
		return nil, err
	}
	st := &Started{Meta: meta, Direct: !p.Namespaced, Waited: p.Ready != nil}
	if !meta.Finished() && p.Ready != nil {
		if o.Waiting != nil {
			o.Waiting(meta.ID, p.Ready)
		}
		start := time.Now()
		meta, err = m.WaitReady(ctx, meta.ID, readyOf(p.Ready, o.Words))
		switch {
		case errors.Is(err, ErrEnded):
		case err != nil:
			st.NotReady = err
		default:
			st.ReadyAfter = time.Since(start)
		}
		if meta != nil {
			st.Meta = meta
		}
	}
	if st.Meta.Finished() {
		st.Meta, st.Output = m.Ended(st.Meta.ID)
		st.NotReady = nil
	} else {
		st.FirstLines = m.firstLines(st.Meta.ID)
	}
	return st, nil
}

// firstLines reads the first lines of a shell's log: a line the bound
// cuts is left out, a last line still being written is kept.
func (m *Manager) firstLines(id string) []string {
	d, err := m.shellDir(id)
	if err != nil {
		return nil
	}
	defer d.Close()
	v, err := openLogView(d)
	if err != nil {
		return nil
	}
	defer v.Close()
	if v.start > 0 { // the log cap dropped its start already
		return nil
	}
	b, _ := v.read(0, min(v.end, firstLinesBytes))
	text := string(b)
	if int64(len(b)) == firstLinesBytes && v.end > firstLinesBytes {
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i+1]
		} else {
			text = "" // one line longer than the bound: nothing whole to show
		}
	}
	var lines []string
	for l := range strings.Lines(text) {
		l = strings.TrimRight(escape.Output(escape.Strip(l), false), "\r\n")
		if strings.TrimSpace(l) == "" {
			continue
		}
		if lines = append(lines, l); len(lines) == firstLinesMax {
			break
		}
	}
	return lines
}

// readyOf is the readiness a plan waits for, compiled.
func readyOf(r *plan.Ready, w *plan.Words) ReadyOptions {
	o := ReadyOptions{Ports: r.Ports, Timeout: r.Timeout, Words: w}
	if r.Log != "" {
		o.Log, _ = plan.CompileRegexp("", r.Log) // checked by the plan
	}
	return o
}

// allocate records a new shell of the plan, under the state dir's lock:
// within the concurrency limit, its name free among running shells.
func (m *Manager) allocate(p *plan.Plan) (*Meta, error) {
	var meta *Meta
	err := m.withLock(func() error {
		running := 0
		for _, s := range m.List() {
			if s.Finished() {
				continue
			}
			running++
			if p.Name != "" && s.Name == p.Name {
				return refusedErr("a running shell (%s) is already named %q; pick another name or stop it", s.ID, p.Name)
			}
		}
		if err := p.CheckRunning(running); err != nil {
			return err
		}
		id, err := m.nextID()
		if err != nil {
			return err
		}
		if err := m.dir.Mkdir(shellFile(id), 0o700); err != nil {
			return err
		}
		meta = newMeta(id, p, m.logPath(id))
		for _, f := range []string{logName, violationsName} {
			if err := m.dir.WriteFile(shellFile(id, f), nil, 0o600); err != nil {
				return err
			}
		}
		if p.Namespaced && len(p.Exposes) > 0 {
			if err := m.markExposing(id); err != nil {
				return err
			}
		}
		return m.writeMeta(meta)
	})
	return meta, err
}

// newMeta is the first record of a planned shell.
func newMeta(id string, p *plan.Plan, log string) *Meta {
	meta := &Meta{
		ID: id, Name: p.Name, Session: p.Session, Command: p.Command, Description: p.Description, Status: StatusStarting,
		StartedAt: time.Now(), Log: log, Exposed: []Exposed{}, AllowHosts: p.AllowHosts(), Credentials: credentialUses(p), Workdir: p.FS.Workdir,
		Isolation: string(p.Isolation), Timeout: p.Timeout.Seconds(), AllowUserns: p.AllowUserNamespaces, OwnerPid: p.OwnerPid,
	}
	for _, e := range p.Exposes {
		meta.Exposed = append(meta.Exposed, Exposed{Listen: e.Listen.String(), Port: int(e.Port)})
	}
	if !p.Limits.Empty() {
		l := p.Limits
		meta.Limits = &l
	}
	return meta
}

// Ended returns a finished shell's record and its last output (64 KiB at
// most), the answer for a shell that ended before it was ready.
func (m *Manager) Ended(id string) (*Meta, string) {
	meta, err := m.Find(id)
	if err != nil {
		return nil, ""
	}
	out := ""
	if d, err := m.shellDir(meta.ID); err == nil {
		if v, err := openLogView(d); err == nil {
			b, _ := v.read(max(v.start, v.end-maxRead), v.end)
			v.Close()
			out = string(b)
		}
		d.Close()
	}
	return meta, out
}

// DefaultSession is $CSHELL_SESSION, else "default".
func DefaultSession() string {
	if s := os.Getenv("CSHELL_SESSION"); s != "" {
		return s
	}
	return "default"
}

// CheckSession refuses session names that cannot be one (plan.CheckSession).
func CheckSession(s string) error { return plan.CheckSession(s) }

// Lines are the answer's lines for a person or a model: what started
// (or how it ended, with its output), where its log is, what is exposed,
// and how long readiness took.
func (s *Started) Lines() string {
	m := s.Meta
	if m.Finished() {
		before := ""
		if s.Waited {
			before = " before it was ready"
		}
		return fmt.Sprintf("shell %s %s%s\nlog: %s\n", m.ID, m.StatusLine, before, m.Log) + escape.Output(escape.Strip(s.Output), false)
	}
	text := fmt.Sprintf("started shell %s (pid %d)\n", m.ID, m.Pid)
	if m.Name != "" {
		text += fmt.Sprintf("name: %s\n", m.Name)
	}
	text += fmt.Sprintf("log: %s\n", m.Log)
	for _, e := range m.Exposed {
		if s.Direct {
			text += fmt.Sprintf("exposed: %s -> %d (no relay: the shell shares this machine's network, so its server is reachable directly)\n", e.Listen, e.Port)
		} else {
			text += fmt.Sprintf("exposed: %s -> %d\n", e.Listen, e.Port)
		}
	}
	if s.Waited && s.NotReady == nil {
		text += fmt.Sprintf("ready after %.1fs\n", s.ReadyAfter.Seconds())
	}
	if len(s.FirstLines) > 0 {
		text += "first lines:\n"
		for _, l := range s.FirstLines {
			text += "  " + l + "\n"
		}
	}
	return text
}

// Answer is run -d's answer in JSON (docs/cli.md): the record's fields,
// and for a shell that ended before the answer, its end and output.
type Answer struct {
	ID              string    `json:"id"`
	Name            string    `json:"name"`
	Status          string    `json:"status"`
	Pid             int       `json:"pid"`
	Log             string    `json:"log"`
	Exposed         []Exposed `json:"exposed"`
	ExposedDirectly bool      `json:"exposed_directly,omitempty"`
	ReadySeconds    *float64  `json:"ready_seconds,omitempty"`
	ExitCode        *int      `json:"exit_code,omitempty"`
	Signal          *string   `json:"signal,omitempty"`
	StatusLine      *string   `json:"status_line,omitempty"`
	Output          *string   `json:"output,omitempty"`
	FirstLines      []string  `json:"first_lines,omitempty"`
}

// Answer is the JSON answer.
func (s *Started) Answer() Answer {
	m := s.Meta
	a := Answer{ID: m.ID, Name: m.Name, Status: m.Status, Pid: m.Pid, Log: m.Log, Exposed: m.Exposed,
		ExposedDirectly: s.Direct && len(m.Exposed) > 0}
	if a.Exposed == nil {
		a.Exposed = []Exposed{}
	}
	if s.Waited && s.NotReady == nil && !m.Finished() {
		secs := s.ReadyAfter.Seconds()
		a.ReadySeconds = &secs
	}
	if m.Finished() {
		a.ExitCode, a.Signal, a.StatusLine, a.Output = m.ExitCode, &m.Signal, &m.StatusLine, &s.Output
	}
	a.FirstLines = s.FirstLines
	return a
}

// credentialUses are the plan's credentials as meta.json shows them.
func credentialUses(p *plan.Plan) []CredentialUse {
	var out []CredentialUse
	for _, c := range p.Network.Credentials {
		out = append(out, CredentialUse{Name: c.Name, Host: c.Host.String(), Header: c.Header})
	}
	return out
}
