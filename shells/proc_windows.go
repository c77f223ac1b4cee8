package shells

import (
	"errors"

	"golang.org/x/sys/windows"
)

// processStartTime is unknown here; liveness then rests on the pid alone.
func processStartTime(int) uint64 { return 0 }

// stillActive is GetExitCodeProcess's code for a process that runs.
const stillActive = 259

// processAlive reports whether pid still runs: a process that ended is
// gone, even while a handle to it keeps its object (and pid) alive.
func processAlive(pid int, _ uint64) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		return true // there, and someone else's
	}
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
