//go:build unix

package shells

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// spawn starts the supervisor, detached in its own session, and waits
// for its answer. It hands over the state dir as the descriptor this
// process checked, and the spec through a pipe (it holds the environment,
// which is not written to disk).
func (m *Manager) spawn(id string, spec supervisorSpec, listeners []*os.File) error {
	b, err := json.Marshal(spec)
	if err != nil {
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
	// fd 3: the answer; 4: the state dir; 5: the spec; 6...: listeners.
	cmd.ExtraFiles = append([]*os.File{aw, m.dir.File(), sr}, listeners...)
	cmd.Dir = "/"
	// Its own session: away from our terminal and process group, so
	// that it outlives run -d.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	aw.Close()
	sr.Close()
	if err != nil {
		sw.Close()
		return fmt.Errorf("start the supervisor: %w", err)
	}
	go func() { // more than a pipe holds: written while it reads
		_, _ = sw.Write(b)
		sw.Close()
	}()
	_ = ar.SetReadDeadline(time.Now().Add(answerTimeout))
	var a answer
	if err := json.NewDecoder(ar).Decode(&a); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("the supervisor gave no answer: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it ends while we still run
	switch a.Status {
	case "running", "ended":
		return nil
	}
	return errors.New(a.Error)
}
