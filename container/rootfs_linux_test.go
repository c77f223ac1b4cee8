package container

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A container's owner counts as gone when it has exited, when it is a
// zombie nobody reaped yet, and when its pid now belongs to a process that
// started after the state was written.
func TestOwnerGone(t *testing.T) {
	if ownerGone(os.Getpid(), time.Now()) {
		t.Error("this test's own process counts as gone")
	}
	if !ownerGone(os.Getpid(), time.Now().Add(-24*time.Hour*365*30)) {
		t.Error("a process that started after the state was written counts as its owner")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Not reaped yet: a zombie until Wait.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); len(b) > 0 && zombie(string(b)) {
			break
		}
	}
	if !ownerGone(pid, time.Now()) {
		t.Error("a zombie counts as alive")
	}
	_ = cmd.Wait()
	if !ownerGone(pid, time.Now()) {
		t.Error("a reaped process counts as alive")
	}
}

func zombie(stat string) bool {
	i := strings.LastIndexByte(stat, ')')
	return i >= 0 && len(stat) > i+2 && stat[i+2] == 'Z'
}
