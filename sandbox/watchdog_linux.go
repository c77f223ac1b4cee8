package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// watchdog holds a rootless container shell's memory bound, where cshell
// has no cgroup to do it (and its process bound, which the kernel holds
// too): it samples every process under the container's init, from this
// side, and ends the whole shell when a bound is passed. It looks every
// 50 ms, every 10 ms once the shell uses half of a bound.
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
	pause := 50 * time.Millisecond
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		mem, tasks, ok := sample(w.root)
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
		pause = 50 * time.Millisecond
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

// sample adds up the anonymous resident memory (statm: resident less
// shared) and the tasks (threads) of root and every process below it,
// following each task's children; false once root is gone.
func sample(root int) (mem int64, tasks int, ok bool) {
	queue := []int{root}
	seen := map[int]bool{}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		dir := "/proc/" + strconv.Itoa(pid)
		statm, err := os.ReadFile(dir + "/statm")
		if err != nil {
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
			b, err := os.ReadFile(dir + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, c := range bytes.Fields(b) {
				if n, err := strconv.Atoi(string(c)); err == nil {
					queue = append(queue, n)
				}
			}
		}
	}
	return mem, tasks, true
}
