//go:build !linux

package shells

import "os"

// cleanupLost kills what is left of a shell whose supervisor died.
func cleanupLost(meta *Meta) {
	if meta.Pid > 0 && processAlive(meta.Pid, 0) {
		if p, err := os.FindProcess(meta.Pid); err == nil {
			_ = p.Kill()
		}
	}
}
