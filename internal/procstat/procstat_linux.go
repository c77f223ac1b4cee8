package procstat

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Stat is a process's state letter (R, S, Z, X…) and its start, in clock
// ticks since boot.
type Stat struct {
	State byte
	Start uint64
}

// Read reads pid's stat; false when there is no such process (or its stat
// is unreadable).
func Read(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	// The command name may hold spaces: fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return Stat{}, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Stat{}, false
	}
	return Stat{State: f[0][0], Start: start}, true
}

// Gone reports whether the process has ended: a zombie (Z) its parent has
// not reaped yet, or dead (X).
func (s Stat) Gone() bool { return s.State == 'Z' || s.State == 'X' }

// Started is the wall-clock time the process started, to within a second
// (the kernel gives boot time in whole seconds); zero when unknown.
func (s Stat) Started() time.Time {
	boot := bootTime()
	if boot.IsZero() {
		return time.Time{}
	}
	// USER_HZ is 100 on every Linux architecture.
	return boot.Add(time.Duration(s.Start) * (time.Second / 100))
}

func bootTime() time.Time {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			if sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(sec, 0)
			}
		}
	}
	return time.Time{}
}
