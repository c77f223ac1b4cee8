package shells

import (
	"io"
	"os"
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
