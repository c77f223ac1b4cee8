//go:build unix

package shells

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// spawn starts the supervisor, detached in its own session, and waits
// for its answer.
func (m *Manager) spawn(id string, spec supervisorSpec, extra []*os.File) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m.shellDir(id), "spec.json"), b, 0o600); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd := exec.Command(self, SuperviseArg, m.dir, id)
	cmd.ExtraFiles = append([]*os.File{pw}, extra...) // fd 3: the answer; 4...: listeners
	cmd.Dir = "/"
	// Its own session: away from our terminal and process group, so
	// that it outlives run -d.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		return fmt.Errorf("start the supervisor: %w", err)
	}
	_ = pr.SetReadDeadline(time.Now().Add(answerTimeout))
	var a answer
	if err := json.NewDecoder(pr).Decode(&a); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("the supervisor gave no answer: %v", err)
	}
	go func() { _ = cmd.Wait() }() // reap it if it ends while we still run
	switch a.Status {
	case "running", "ended":
		return nil
	}
	return errors.New(a.Error)
}
