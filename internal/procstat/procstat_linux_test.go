package procstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestRead(t *testing.T) {
	s, ok := Read(os.Getpid())
	if !ok || s.Gone() || s.Start == 0 {
		t.Fatalf("this process: %+v %v", s, ok)
	}
	if d := time.Since(s.Started()); d < 0 || d > time.Hour {
		t.Errorf("this test started %v ago?", d)
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if s, _ := Read(pid); s.Gone() {
			break
		}
	}
	if s, ok := Read(pid); !ok || !s.Gone() {
		t.Errorf("an unreaped child: %+v %v, want a zombie", s, ok)
	}
	_ = cmd.Wait()
	if _, ok := Read(pid); ok {
		t.Error("a reaped child still reads")
	}
}
