//go:build !linux && !windows

package shells

import "os"

// processStartTime is unknown here; liveness then rests on the pid alone.
func processStartTime(int) uint64 { return 0 }

// processAlive reports whether pid still runs.
func processAlive(pid int, _ uint64) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return signalZero(p) == nil
}
