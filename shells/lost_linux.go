package shells

import (
	"github.com/cshell/cshell/container"
	"golang.org/x/sys/unix"
)

// cleanupLost makes sure nothing of a lost shell runs on: a container
// died with its supervisor (parent-death signal), but a process-group
// shell may not have; and the container's state is collected.
func cleanupLost(meta *Meta) {
	if meta.Pid > 0 && meta.PidTime != 0 && processAlive(meta.Pid, meta.PidTime) {
		_ = unix.Kill(-meta.Pid, unix.SIGKILL)
		_ = unix.Kill(meta.Pid, unix.SIGKILL)
	}
	container.CollectGarbage()
}
