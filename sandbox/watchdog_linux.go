package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// watchdog holds a rootless container shell's memory bound, where cshell
// has no cgroup to do it (and its process bound, which the kernel holds
// too): it samples every process under the container's init, from this
// side, and ends the whole shell when a bound is passed. It looks every
// 100 ms, every 10 ms once the shell uses half of a bound.
type watchdog struct {
	limits policy.Limits
	root   int // the container's init, as this machine sees it
	kill   func() error

	mu   sync.Mutex
	hit  string // the bound that ended the shell
	stop chan struct{}
	done chan struct{}
}

func startWatchdog(sh container.Shell, l policy.Limits) *watchdog {
	w := &watchdog{limits: l, root: sh.Pid(), kill: sh.Kill, stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

func (w *watchdog) run() {
	defer close(w.done)
	var s sampler
	pause := 100 * time.Millisecond
	t := time.NewTimer(pause)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		mem, tasks, ok := s.sample(w.root)
		if !ok {
			return // the init is gone: the shell ended
		}
		hit := ""
		switch {
		case w.limits.Memory > 0 && mem > w.limits.Memory:
			hit = "memory"
		case w.limits.Pids > 0 && tasks > w.limits.Pids:
			hit = "pids"
		}
		if hit != "" {
			w.mu.Lock()
			w.hit = hit
			w.mu.Unlock()
			_ = w.kill()
			return
		}
		pause = 100 * time.Millisecond
		if (w.limits.Memory > 0 && mem > w.limits.Memory/2) || (w.limits.Pids > 0 && tasks > w.limits.Pids/2) {
			pause = 10 * time.Millisecond
		}
		t.Reset(pause)
	}
}

// Hit is the bound that made the watchdog end the shell, or "".
func (w *watchdog) Hit() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.hit
}

func (w *watchdog) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

var pageSize = int64(os.Getpagesize())

// sampler reads /proc with one buffer, so that a sample allocates little.
type sampler struct {
	buf   [4096]byte
	queue []int
	seen  map[int]bool
}

// read reads a small /proc file into the buffer.
func (s *sampler) read(path string) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, s.buf[:])
	if err != nil || n < 0 {
		return nil, false
	}
	return s.buf[:n], true
}

// sample adds up the anonymous resident memory (statm: resident less
// shared) and the tasks (threads) of root and every process below it,
// following each task's children; false once root is gone.
func (s *sampler) sample(root int) (mem int64, tasks int, ok bool) {
	s.queue = append(s.queue[:0], root)
	if s.seen == nil {
		s.seen = map[int]bool{}
	}
	clear(s.seen)
	for len(s.queue) > 0 {
		pid := s.queue[0]
		s.queue = s.queue[1:]
		if s.seen[pid] {
			continue
		}
		s.seen[pid] = true
		dir := "/proc/" + strconv.Itoa(pid)
		statm, ok := s.read(dir + "/statm")
		if !ok {
			if pid == root {
				return 0, 0, false
			}
			continue // ended meanwhile
		}
		if f := bytes.Fields(statm); len(f) >= 3 {
			res, _ := strconv.ParseInt(string(f[1]), 10, 64)
			shared, _ := strconv.ParseInt(string(f[2]), 10, 64)
			mem += (res - shared) * pageSize
		}
		ts, _ := os.ReadDir(dir + "/task")
		tasks += len(ts)
		for _, t := range ts {
			b, ok := s.read(dir + "/task/" + t.Name() + "/children")
			if !ok {
				continue
			}
			for _, c := range bytes.Fields(b) {
				if n, err := strconv.Atoi(string(c)); err == nil {
					s.queue = append(s.queue, n)
				}
			}
		}
	}
	return mem, tasks, true
}
