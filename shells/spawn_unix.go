//go:build unix

package shells

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/cshell/cshell/plan"
)

// spawn starts the supervisor, detached in its own session, and waits
// for its answer (or ctx's end: the supervisor is then killed). It hands
// over the state dir as the descriptor this process checked, and the plan
// through a pipe (it holds the environment, which is not written to disk).
func (m *Manager) spawn(ctx context.Context, id string, p *plan.Plan, files []*os.File) error {
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
	cmd := exec.Command(self, SuperviseArg, m.path, id)
	// fd 3: the answer; 4: the state dir; 5: the plan; 6...: listeners,
	// then the caches' lock.
	cmd.ExtraFiles = append([]*os.File{aw, m.dir.File(), sr}, files...)
	cmd.Dir = "/"
	// Its own session: away from our terminal and process group, so
	// that it outlives run -d.
	cmd.SysProcAttr = detachedAttr()
	err = cmd.Start()
	aw.Close()
	sr.Close()
	if err != nil {
		sw.Close()
		return fmt.Errorf("start the supervisor: %w", err)
	}
	go func() { // more than a pipe holds: written while it reads
		_, _ = sw.Write(b.Bytes())
		sw.Close()
	}()
	_ = ar.SetReadDeadline(time.Now().Add(answerTimeout))
	stop := context.AfterFunc(ctx, func() { _ = ar.SetReadDeadline(time.Now()) })
	var a answer
	err = json.NewDecoder(ar).Decode(&a)
	stop()
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if ctx.Err() != nil {
			return fmt.Errorf("the start was cancelled (%w); nothing was left running", ctx.Err())
		}
		return fmt.Errorf("the supervisor gave no answer: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it ends while we still run
	switch a.Status {
	case "running", "ended":
		return nil
	}
	return errors.New(a.Error)
}
