package shells

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// processStartTime reads a process's start time (clock ticks since boot)
// from /proc, so that a reused pid is not taken for the process we knew.
func processStartTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces: fields start after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64)
	return v
}

// processAlive reports whether pid still runs and is the same process.
func processAlive(pid int, start uint64) bool {
	if unix.Kill(pid, 0) == unix.ESRCH {
		return false
	}
	if start == 0 {
		return true
	}
	st := processStartTime(pid)
	if st != start {
		return false
	}
	// A zombie is as good as gone.
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && len(s) > i+2 && s[i+2] == 'Z' {
		return false
	}
	return true
}
