package sandbox

import (
	"os/exec"
	"testing"
	"time"
)

// TestSampleFollowsTheTree starts a shell with a child shell and a
// grandchild sleep: all three count, and nothing else.
func TestSampleFollowsTheTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sh -c 'sleep 5 & wait' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(100 * time.Millisecond)
	var s sampler
	mem, tasks, ok := s.sample(cmd.Process.Pid)
	if !ok || tasks != 3 || mem <= 0 {
		t.Errorf("sample: %d bytes, %d tasks, %v", mem, tasks, ok)
	}
	if _, _, ok := s.sample(1 << 30); ok {
		t.Errorf("a missing root sampled")
	}
}

func BenchmarkSample(b *testing.B) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	time.Sleep(100 * time.Millisecond)
	var s sampler
	b.ResetTimer()
	for range b.N {
		s.sample(cmd.Process.Pid)
	}
}
