package shells

import "github.com/cshell/cshell/container"

// lost tidies after a shell whose supervisor died. Nothing of a container
// shell runs on (its init has a parent-death signal, and the PID namespace
// ends with it), and a process-group shell's command had one too, so no
// process is signalled here: a record names no process cshell can prove
// it started. What is left is the exposing mark and libcontainer's state.
func (m *Manager) lost(meta *Meta) {
	_ = m.dir.Remove(exposingName + "/" + meta.ID)
	container.CollectGarbage()
}
