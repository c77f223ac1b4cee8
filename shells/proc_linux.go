package shells

import (
	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/internal/procstat"
)

// processStartTime reads a process's start time (clock ticks since boot)
// from /proc, so that a reused pid is not taken for the process we knew.
func processStartTime(pid int) uint64 {
	st, _ := procstat.Read(pid)
	return st.Start
}

// processAlive reports whether pid still runs and is the same process.
func processAlive(pid int, start uint64) bool {
	if unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	if start == 0 {
		return true
	}
	st, ok := procstat.Read(pid)
	// A zombie is as good as gone.
	return ok && st.Start == start && !st.Gone()
}
