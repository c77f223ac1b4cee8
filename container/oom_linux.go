package container

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/runc/libcontainer"
	"golang.org/x/sys/unix"
)

// watchOOM tells kills of each process the kernel's OOM killer ends in
// the container's memory cgroup, until the cgroup is removed. The
// cgroup's event (libcontainer's NotifyOOM: an eventfd on cgroup v1,
// memory.events on v2) says that one happened; the kernel's log
// (/dev/kmsg, root's to read) says which: "oom-kill:...,oom_memcg=PATH,
// task_memcg=PATH,task=NAME,pid=PID,uid=UID". Without the log a kill is
// told without a name. told counts the kills told, for the end of the
// shell to wait for (waitOOMTold).
func watchOOM(c *libcontainer.Container, id string, kills func(OOMKill), told *atomic.Int64, counted *oomCounter) {
	events, err := c.NotifyOOM()
	if err != nil {
		return
	}
	kmsg, err := os.OpenFile("/dev/kmsg", os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err == nil {
		// Only what the kernel writes from now on.
		if _, err := unix.Seek(int(kmsg.Fd()), 0, unix.SEEK_END); err != nil {
			kmsg.Close()
			kmsg = nil
		}
	} else {
		kmsg = nil
	}
	go func() {
		if kmsg != nil {
			defer kmsg.Close()
		}
		for range events {
			// The cgroup's event may come before the kernel logged the
			// kill: look again a few times.
			var found []OOMKill
			for try := 0; try < 10 && kmsg != nil; try++ {
				if found = readOOMKills(kmsg, id); len(found) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(found) == 0 {
				// No record (the log is root's to read): as many kills
				// without a name as the cgroup counted and none told.
				// An event may come with none (cgroup v2 tells "oom"
				// and "oom_kill" apart).
				for n := int64(counted.count()) - told.Load(); n > 0; n-- {
					found = append(found, OOMKill{})
				}
			}
			for _, k := range found {
				kills(k)
			}
			told.Add(int64(len(found)))
		}
	}()
}

// waitOOMTold waits, at most a second, until the watcher has told as
// many kills as the cgroup counted: a command the OOM killer ended may end
// the shell before its kill was told, and a foreground shell's end is
// the last moment it can be. Kills the watcher has not told by then (its
// event late, or merged with another: seen under a slow emulated CPU)
// are told here, without a name: the cgroup's count is the last word.
func waitOOMTold(counted *oomCounter, told *atomic.Int64, kills func(OOMKill)) {
	n := int64(counted.count())
	for deadline := time.Now().Add(time.Second); told.Load() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	for t := told.Load(); t < n; t = told.Load() {
		if told.CompareAndSwap(t, n) {
			for ; t < n; t++ {
				kills(OOMKill{})
			}
		}
	}
}

// oomCounter counts the OOM kills in a container's memory cgroup, also
// once the cgroup is gone: a systemd scope (a rootless shell's limits on
// cgroup v2) is removed as soon as it is empty, which can be before the
// kill's event was read (seen under a slow emulated CPU: the hog killed,
// the shell ended, the kill untold). Then the parent's count, which
// holds its children's (cgroup v2's memory.events is hierarchical), says
// how many happened below it since the shell started; the most either
// count says.
type oomCounter struct {
	c      *libcontainer.Container
	mu     sync.Mutex
	last   int    // the cgroup's count, last read
	parent string // the parent's memory.events (cgroup v2), "" on v1
	base   int    // its count when the shell started
}

func newOOMCounter(c *libcontainer.Container) *oomCounter {
	o := &oomCounter{c: c}
	if st, err := c.State(); err == nil {
		if dir := st.CgroupPaths[""]; dir != "" && st.CgroupPaths["memory"] == "" {
			o.parent = filepath.Join(filepath.Dir(dir), "memory.events")
			var ok bool
			if o.base, ok = killsIn(o.parent); !ok {
				o.parent = ""
			}
		}
	}
	return o
}

func (o *oomCounter) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n, ok := oomKills(o.c); ok {
		o.last = max(o.last, n)
		return o.last
	}
	if o.parent != "" {
		if n, ok := killsIn(o.parent); ok {
			o.last = max(o.last, n-o.base)
		}
	}
	return o.last
}

// readOOMKills reads the kernel log's new records and returns the OOM
// kills in the cgroup whose last path element is id.
func readOOMKills(kmsg *os.File, id string) []OOMKill {
	if kmsg == nil {
		return nil
	}
	var out []OOMKill
	buf := make([]byte, 8192) // a record is at most 8 KiB (one read, one record)
	for range 4096 {
		n, err := unix.Read(int(kmsg.Fd()), buf)
		if err == unix.EPIPE {
			continue // records were overwritten before we read them
		}
		if err != nil || n <= 0 {
			break
		}
		if k, ok := parseOOMRecord(buf[:n], id); ok {
			out = append(out, k)
		}
	}
	return out
}

// parseOOMRecord reads one /dev/kmsg record: "PRI,SEQ,TIME,FLAGS;TEXT".
func parseOOMRecord(rec []byte, id string) (OOMKill, bool) {
	_, text, ok := bytes.Cut(rec, []byte(";"))
	if !ok || !bytes.HasPrefix(text, []byte("oom-kill:")) {
		return OOMKill{}, false
	}
	line, _, _ := bytes.Cut(text, []byte("\n"))
	var k OOMKill
	mine := false
	for _, f := range strings.Split(string(line[len("oom-kill:"):]), ",") {
		key, v, _ := strings.Cut(f, "=")
		switch key {
		case "oom_memcg", "task_memcg":
			if i := strings.LastIndexByte(v, '/'); v[i+1:] == id {
				mine = true
			}
		case "task":
			k.Comm = v
		case "pid":
			k.Pid, _ = strconv.Atoi(v)
		}
	}
	return k, mine
}
