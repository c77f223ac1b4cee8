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

// sampler reads /proc with one buffer, so that a sample allocates little.
type sampler struct {
	buf    [4096]byte
	queue  []int
	seen   map[int]bool
	pids   []int // the processes of the last sample, root first
	n      int   // samples taken
	memfds int64 // what the memfds held at the last look
	inodes map[[2]uint64]bool
	link   [256]byte
}

// statusKiB reads a "Name:  N kB" line of /proc/PID/status.
func statusKiB(status []byte, name string) int64 {
	i := bytes.Index(status, []byte(name))
	if i < 0 {
		return 0
	}
	f := bytes.Fields(status[i+len(name):])
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.ParseInt(string(f[0]), 10, 64)
	return n
}

// memfdBytes adds up what the memfds open in the shell's processes take
// (st_blocks), each once.
func (s *sampler) memfdBytes() int64 {
	if s.inodes == nil {
		s.inodes = map[[2]uint64]bool{}
	}
	clear(s.inodes)
	var total int64
	for _, pid := range s.pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // PID 1 and other non-dumpable processes keep theirs to themselves
		}
		for _, fd := range fds {
			n, err := unix.Readlink(dir+fd.Name(), s.link[:])
			if err != nil || !bytes.HasPrefix(s.link[:n], []byte("/memfd:")) {
				continue
			}
			var st unix.Stat_t
			if unix.Stat(dir+fd.Name(), &st) != nil {
				continue
			}
			key := [2]uint64{uint64(st.Dev), st.Ino}
			if !s.inodes[key] {
				s.inodes[key] = true
				total += st.Blocks * 512
			}
		}
	}
	return total
}

// tmpfsBytes is what the shell's own /tmp, /run and /dev/shm hold, seen
// through the root of one of its processes (PID 1 is not dumpable: its
// root is closed to this side).
func (s *sampler) tmpfsBytes() int64 {
	for _, pid := range s.pids {
		root := "/proc/" + strconv.Itoa(pid) + "/root"
		var total int64
		ok := false
		for _, m := range []string{"/tmp", "/run", "/dev/shm"} {
			var st unix.Statfs_t
			if unix.Statfs(root+m, &st) != nil || st.Type != unix.TMPFS_MAGIC {
				continue
			}
			ok = true
			total += int64(st.Blocks-st.Bfree) * int64(st.Bsize)
		}
		if ok {
			return total
		}
	}
	return 0
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

// memfdEvery is how many samples pass between two looks at the memfds the
// shell's processes hold (each look reads every descriptor's link).
const memfdEvery = 10

// sample adds up the memory the shell holds, as a memory cgroup would
// count it: the resident anonymous and shared memory (status: RssAnon,
// RssShmem) of root and every process below it, the memfds they hold
// open (written, never mapped, they show nowhere else; counted once by
// their inode, every memfdEvery samples), and what the shell's own tmpfs
// hold (/tmp, /run, /dev/shm, seen through a process's root); and the
// tasks (threads), following each task's children; false once root is
// gone. Shared memory mapped by several processes is counted for each.
func (s *sampler) sample(root int) (mem int64, tasks int, ok bool) {
	mem, tasks, ok = s.processes(root)
	if !ok {
		return 0, 0, false
	}
	if s.n%memfdEvery == 0 {
		s.memfds = s.memfdBytes()
	}
	s.n++
	return mem + s.memfds + s.tmpfsBytes(), tasks, true
}

// processes adds up the resident memory and the tasks of the tree under
// root, and keeps its pids (s.pids).
func (s *sampler) processes(root int) (mem int64, tasks int, ok bool) {
	s.queue = append(s.queue[:0], root)
	s.pids = s.pids[:0]
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
		status, ok := s.read(dir + "/status")
		if !ok {
			if pid == root {
				return 0, 0, false
			}
			continue // ended meanwhile
		}
		s.pids = append(s.pids, pid)
		mem += statusKiB(status, "RssAnon:") << 10
		mem += statusKiB(status, "RssShmem:") << 10
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
