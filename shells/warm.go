package shells

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/sandbox"
)

// Warm keeps one sandbox made ahead of the next foreground run (the MCP
// server's bash calls): a container whose namespaces, mounts, cgroup,
// proxy and egress exist and whose PID 1 waits for its command
// (sandbox.Options.Held). A run whose plan makes the same sandbox
// (plan.SandboxKey, and the same reached ports) takes it and only hands
// its command over; any other run starts cold. A warm sandbox serves one
// run and is closed with it, so no run meets what an earlier one left;
// the next is made once that run ended. Idle, it costs no CPU: PID 1
// waits in recvmsg. Close ends the one waiting.
type Warm struct {
	mu     sync.Mutex
	ready  *warmBox // nil: none waits
	making bool
	closed bool
	made   sync.WaitGroup // the making under way

	// Used and Missed count the runs that took a warm sandbox and those
	// that found none or one made for another plan.
	Used, Missed atomic.Int64
}

// warmPrefix begins a warm sandbox's container id (doctor counts them).
const warmPrefix = "warm"

// NewWarm returns a pool with nothing made yet: Prepare makes the first.
func NewWarm() *Warm { return &Warm{} }

// warmBox is one held sandbox and what it holds until its run ends.
type warmBox struct {
	key   string
	reach []netip.AddrPort
	box   *sandbox.Sandbox
	plan  *plan.Plan
	m     *Manager // nil without a state dir
	hooks *hooks
}

// hooks let a warm sandbox's callbacks, wired before its run is known,
// reach the run's: what it refuses is told to the run that took it.
type hooks struct {
	mu      sync.Mutex
	refused func(policy.Violation)
	record  func(policy.Violation)
	asking  func(host string, port int)
}

func (h *hooks) set(w plan.Wiring) {
	h.mu.Lock()
	h.refused, h.record, h.asking = w.Refused, w.Record, w.Asking
	h.mu.Unlock()
}

func (h *hooks) onRefused(v policy.Violation) {
	h.mu.Lock()
	f := h.refused
	h.mu.Unlock()
	if f != nil {
		f(v)
	}
}

func (h *hooks) onRecord(v policy.Violation) {
	h.mu.Lock()
	f := h.record
	h.mu.Unlock()
	if f != nil {
		f(v)
	}
}

func (h *hooks) onAsking(host string, port int) {
	h.mu.Lock()
	f := h.asking
	h.mu.Unlock()
	if f != nil {
		f(host, port)
	}
}

// Idle is how many warm sandboxes wait (0 or 1).
func (w *Warm) Idle() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ready != nil {
		return 1
	}
	return 0
}

// Prepare makes, in the background, a warm sandbox for runs like o (its
// command does not matter), unless one waits or is being made. A plan
// that cannot be held (exposed ports, no container, a terminal's run)
// makes none; neither does a start that fails: the next run is cold.
func (w *Warm) Prepare(o RunOptions) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.closed || w.making || w.ready != nil {
		w.mu.Unlock()
		return
	}
	w.making = true
	w.made.Add(1)
	w.mu.Unlock()
	go func() {
		defer w.made.Done()
		wb := makeWarm(o)
		w.mu.Lock()
		w.making = false
		if wb != nil && !w.closed && w.ready == nil {
			w.ready, wb = wb, nil
		}
		w.mu.Unlock()
		if wb != nil {
			wb.release()
		}
	}()
}

// take returns the warm sandbox when it was made for a plan with key and
// reaches, and gives it up; one made for another plan is closed.
func (w *Warm) take(key string, reach []sandbox.Reach) *warmBox {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	wb := w.ready
	w.ready = nil
	w.mu.Unlock()
	if wb != nil && key != "" && wb.key == key && slices.Equal(wb.reach, reachKey(reach)) && wb.box.Unchanged() {
		w.Used.Add(1)
		return wb
	}
	w.Missed.Add(1)
	if wb != nil {
		wb.release() // made for another plan: it costs this run its end, a few ms
	}
	return nil
}

// Close ends the warm sandbox that waits, and one being made (once its
// start returned), and makes no more.
func (w *Warm) Close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	w.closed = true
	wb := w.ready
	w.ready = nil
	w.mu.Unlock()
	if wb != nil {
		wb.release()
	}
	w.made.Wait()
}

// makeWarm starts a held sandbox for runs like o, or returns nil.
func makeWarm(o RunOptions) *warmBox {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	o.Purpose = plan.Foreground
	o.Session = cmp.Or(o.Session, DefaultSession())
	o.Command = []string{"true"} // the plan needs one; the run brings its own
	if plan.CheckSession(o.Session) != nil || !relayed(o.Isolation) {
		return nil
	}
	var m *Manager
	var reach []sandbox.Reach
	if o.StateDir != "" {
		var err error
		if m, err = Open(o.StateDir, o.Log); err != nil {
			return nil
		}
		reach = m.reaches(o.Session)
	}
	wb := &warmBox{m: m}
	var reserved []int
	for _, r := range reach {
		reserved = append(reserved, int(r.Host.Port()))
	}
	p, err := plan.New(o.Request, hostFacts(o.FS.Home, reserved))
	wb.plan = p
	if err != nil || len(p.Exposes) > 0 || !p.Namespaced {
		wb.release()
		return nil
	}
	if wb.key = p.SandboxKey(); wb.key == "" {
		wb.release()
		return nil
	}
	wb.hooks = &hooks{}
	wiring := plan.Wiring{ID: sandbox.NewID(warmPrefix), Reach: reach, Held: true,
		Refused: wb.hooks.onRefused, Record: wb.hooks.onRecord, Asking: wb.hooks.onAsking}
	if m != nil && p.Network.Grants {
		wiring.Grants = m.grantsFor(p.Session, "")
	}
	if m != nil && len(p.Network.Credentials) > 0 {
		wiring.Revoked = m.revokedFor(p.Session, "")
	}
	if wb.box, err = startSandbox(p, p.Options(wiring)); err != nil {
		o.Log.Debug("no warm sandbox", "err", err)
		wb.release()
		return nil
	}
	wb.reach = reachKey(reach)
	return wb
}

// release closes the sandbox (a no-op once its run closed it) and what
// it held.
func (wb *warmBox) release() {
	if wb.box != nil {
		wb.box.Close()
	}
	if wb.plan != nil {
		wb.plan.Release()
	}
	if wb.m != nil {
		wb.m.Close()
	}
}

// begin gives the warm sandbox the run's command: its plan's command
// and start directory, the wiring's callbacks and streams (made files
// here where they are not: stdio copies between and waits for them).
func (wb *warmBox) begin(p *plan.Plan, w plan.Wiring, stdio *piped) error {
	wb.hooks.set(w)
	in, out, errw, err := stdio.files(w.Stdin, w.Stdout, w.Stderr)
	if err != nil {
		return fmt.Errorf("%w: %w", sandbox.ErrNotStarted, err)
	}
	return wb.box.Begin(p.Command, p.Argv, p.FS.Start, in, out, errw)
}

// reachKey is what decides reaches alike: their addresses, in order.
func reachKey(reach []sandbox.Reach) []netip.AddrPort {
	k := make([]netip.AddrPort, len(reach))
	for i, r := range reach {
		k[i] = r.Host
	}
	slices.SortFunc(k, func(a, b netip.AddrPort) int { return a.Compare(b) })
	return k
}

// files are the three streams as files, for a held sandbox's init: a
// file as itself, /dev/null for none, and a pipe for any other, copied
// into it until the command and all it started closed their ends.
func (p *piped) files(in io.Reader, out, errw io.Writer) (*os.File, *os.File, *os.File, error) {
	var stdin *os.File
	switch f := in.(type) {
	case *os.File:
		stdin = f
	}
	if stdin == nil {
		devnull, err := os.Open(os.DevNull)
		if err != nil {
			return nil, nil, nil, err
		}
		p.child = append(p.child, devnull)
		stdin = devnull
	}
	file := func(w io.Writer) (*os.File, error) {
		if f, ok := w.(*os.File); ok && f != nil {
			return f, nil
		}
		if w == nil {
			w = io.Discard
		}
		pw, err := p.copyInto(w)
		if err != nil {
			return nil, err
		}
		p.child = append(p.child, pw)
		return pw, nil
	}
	stdout, err := file(out)
	if err != nil {
		return nil, nil, nil, err
	}
	if sameWriter(out, errw) { // one pipe, as exec.Cmd makes: the order of the two kept
		return stdin, stdout, stdout, nil
	}
	stderr, err := file(errw)
	if err != nil {
		return nil, nil, nil, err
	}
	return stdin, stdout, stderr, nil
}

// sameWriter reports whether a and b are one writer; a writer whose type
// cannot be compared is another.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
