package shells

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/containerd/console"
)

// terminalSession joins the user's terminal to the shell's new one: raw
// mode here, bytes copied both ways, the size kept in step.
type terminalSession struct {
	user   console.Console
	master console.Console
	out    chan struct{} // closed when the shell's output has all been copied
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f any) bool { return isTerminal(f) }

func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok || file == nil {
		return false
	}
	_, err := console.ConsoleFromFile(file)
	return err == nil
}

func attachTerminal(master, stdin *os.File, stdout io.Writer) (*terminalSession, error) {
	user, err := console.ConsoleFromFile(stdin)
	if err != nil {
		return nil, err
	}
	m, err := console.ConsoleFromFile(master)
	if err != nil {
		return nil, err
	}
	t := &terminalSession{user: user, master: m, out: make(chan struct{})}
	t.resize()
	if err := user.SetRaw(); err != nil {
		return nil, err
	}
	go func() { _, _ = io.Copy(master, stdin) }() // ends with the process
	go func() {
		_, _ = io.Copy(stdout, master) // EIO once the shell's side is closed
		close(t.out)
	}()
	return t, nil
}

func (t *terminalSession) resize() {
	if size, err := t.user.Size(); err == nil {
		_ = t.master.Resize(size)
	}
}

// finish waits briefly for the last output after the shell ended.
func (t *terminalSession) finish() {
	select {
	case <-t.out:
	case <-time.After(time.Second):
	}
}

func (t *terminalSession) restore() { _ = t.user.Reset() }

// piped puts a pipe between the command and each of the caller's streams
// that is a terminal, when the command gets no terminal of its own: it
// then sees a pipe, which it can neither reconfigure nor keep reading
// from after cshell has ended. Not safe for concurrent use.
type piped struct {
	child  []*os.File // the command's ends, closed here once it started
	own    []*os.File // write ends cshell keeps writing to (notes), closed at finish
	copies sync.WaitGroup
}

// ordered gives the command's stderr (and its stdout, when both are one
// writer) a pipe of cshell's when errw is not a file (an MCP call's
// buffer), and returns notes, where cshell tells what the shell was
// refused: that same pipe, so that a note lands between the lines the
// command wrote before and after the refused call, as a terminal shows
// it. A file stays itself: writes to it are in order already.
func (p *piped) ordered(out, errw io.Writer) (stdout, stderr, notes io.Writer, err error) {
	if _, ok := errw.(*os.File); ok || errw == nil {
		return out, errw, errw, nil
	}
	pw, err := p.copyInto(errw)
	if err != nil {
		return nil, nil, nil, err
	}
	p.own = append(p.own, pw)
	if sameWriter(out, errw) {
		out = pw
	}
	return out, pw, pw, nil
}

// copyInto returns the write end of a pipe whose every byte is copied
// into w until all its write ends are closed (finish waits for that).
func (p *piped) copyInto(w io.Writer) (*os.File, error) {
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.copies.Add(1)
	go func() {
		defer p.copies.Done()
		_, _ = io.Copy(w, r)
		r.Close()
	}()
	return pw, nil
}

func (p *piped) detach(in *os.File, out, errw io.Writer) (io.Reader, io.Writer, io.Writer, error) {
	var stdin io.Reader = in
	if isTerminal(in) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, nil, err
		}
		// Blocked on the terminal until input comes or cshell ends.
		go func() {
			_, _ = io.Copy(w, in)
			w.Close()
		}()
		p.child = append(p.child, r)
		stdin = r
	}
	wrap := func(w io.Writer) (io.Writer, error) {
		if !isTerminal(w) {
			return w, nil
		}
		pw, err := p.copyInto(w)
		if err != nil {
			return nil, err
		}
		p.child = append(p.child, pw)
		return pw, nil
	}
	stdout, err := wrap(out)
	if err != nil {
		return nil, nil, nil, err
	}
	stderr, err := wrap(errw)
	if err != nil {
		return nil, nil, nil, err
	}
	return stdin, stdout, stderr, nil
}

// started closes the command's ends here: the command has its own.
func (p *piped) started() {
	for _, f := range p.child {
		f.Close()
	}
	p.child = nil
}

// finish waits a moment for the last output; a daemon that escaped a
// process-group shell may hold the pipe open.
func (p *piped) finish() {
	for _, f := range p.own {
		f.Close()
	}
	p.own = nil
	done := make(chan struct{})
	go func() { p.copies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
	}
}

func (p *piped) close() {
	p.started()
	for _, f := range p.own {
		f.Close()
	}
	p.own = nil
}
