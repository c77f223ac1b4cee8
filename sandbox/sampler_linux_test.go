package sandbox

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

func TestStatusKiB(t *testing.T) {
	status := []byte("Name:\tsh\nVmRSS:\t   2048 kB\nRssAnon:\t    512 kB\nRssShmem:\t      0 kB\nBad:\tx kB\nLast:")
	for _, c := range []struct {
		name string
		want int64
	}{
		{"RssAnon:", 512},
		{"VmRSS:", 2048},
		{"RssShmem:", 0},
		{"RssFile:", 0}, // absent
		{"Bad:", 0},     // not a number
		{"Last:", 0},    // nothing after it
	} {
		if got := statusKiB(status, c.name); got != c.want {
			t.Errorf("statusKiB(%q) = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestMemfdBytes: what a process's memfds hold counts, each memfd once
// however many descriptors lead to it.
func TestMemfdBytes(t *testing.T) {
	var s sampler
	s.pids = []int{os.Getpid()}
	before := s.memfdBytes()
	fd, err := unix.MemfdCreate("sandbox-test", unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dup)
	if got := s.memfdBytes() - before; got < 1<<20 || got >= 2<<20 {
		t.Errorf("a 1 MiB memfd held twice counts %d bytes", got)
	}
	// A process gone (or one whose descriptors are closed to us) counts nothing.
	s.pids = []int{1 << 30}
	if got := s.memfdBytes(); got != 0 {
		t.Errorf("a missing process holds %d bytes of memfds", got)
	}
}
