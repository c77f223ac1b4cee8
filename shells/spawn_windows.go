package shells

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/cshell/cshell/plan"
)

// spawn starts the supervisor detached (no console, a process group of
// its own, out of the caller's job object where that job lets it go) and
// waits for its answer (or ctx's end: the supervisor is then killed). The
// answer's pipe and the plan's are inherited handles, named to the child
// in an argument; the plan holds the environment, so it never touches
// the disk.
func (m *Manager) spawn(ctx context.Context, id string, p *plan.Plan, files []*os.File) error {
	if len(files) > 0 {
		return errors.New("a background shell on Windows takes no listeners or locks from run -d")
	}
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ar, aw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer ar.Close()
	sr, sw, err := os.Pipe()
	if err != nil {
		aw.Close()
		return err
	}
	child := []*os.File{aw, sr}
	closeChild := func() {
		for _, f := range child {
			f.Close()
		}
	}
	for _, f := range child {
		if err := windows.SetHandleInformation(windows.Handle(f.Fd()), windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT); err != nil {
			closeChild()
			sw.Close()
			return fmt.Errorf("start the supervisor: %w", err)
		}
	}
	start := func(flags uint32) (*exec.Cmd, error) {
		cmd := exec.Command(self, SuperviseArg, m.path, id, handleArg(aw.Fd(), sr.Fd()))
		cmd.Dir = os.Getenv("SystemRoot")
		cmd.SysProcAttr = &syscall.SysProcAttr{
			CreationFlags:              flags,
			HideWindow:                 true,
			AdditionalInheritedHandles: []syscall.Handle{syscall.Handle(aw.Fd()), syscall.Handle(sr.Fd())},
		}
		return cmd, cmd.Start()
	}
	// Detached from our console and process group, so that run -d's end
	// or a Ctrl-C in its console leaves it; out of our job where the job
	// allows it (a CI runner's job that kills on close would end it).
	const detached = windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS
	cmd, err := start(detached | windows.CREATE_BREAKAWAY_FROM_JOB)
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		cmd, err = start(detached) // a job that does not let its processes go
	}
	closeChild()
	if err != nil {
		sw.Close()
		return fmt.Errorf("start the supervisor: %w", err)
	}
	go func() { // more than a pipe holds: written while it reads
		_, _ = sw.Write(b.Bytes())
		sw.Close()
	}()
	// A pipe of os.Pipe takes no deadline on Windows: the wait ends by
	// killing the supervisor, whose end of the pipe is the last writer,
	// so the read sees EOF.
	kill := func() { _ = cmd.Process.Kill() }
	timer := time.AfterFunc(answerTimeout, kill)
	stop := context.AfterFunc(ctx, kill)
	var a answer
	err = json.NewDecoder(ar).Decode(&a)
	stop()
	timer.Stop()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if ctx.Err() != nil {
			return fmt.Errorf("the start was cancelled (%w); nothing was left running", ctx.Err())
		}
		return fmt.Errorf("the supervisor gave no answer: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	switch a.Status {
	case "running", "ended":
		return nil
	}
	return errors.New(a.Error)
}
