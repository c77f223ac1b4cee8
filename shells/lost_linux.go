package shells

import "github.com/cshell/cshell/container"

// lost tidies after a shell whose supervisor died. Nothing of a container
// shell runs on (its init has a parent-death signal, and the PID namespace
// ends with it), and a process-group shell's command had one too. No pid a
// record names is signalled: a record could name any process. What is
// left is the exposing mark, libcontainer's state and, of a process-group
// shell, the processes that carry its token.
func (m *Manager) lost(meta *Meta) {
	_ = m.dir.Remove(exposingName + "/" + meta.ID)
	container.CollectGarbage()
	if meta.Isolation == string(container.Process) {
		// Its command died with the supervisor, what it started may not
		// have: the processes carrying the shell's token (and only those:
		// no record can make cshell kill anything else) go too.
		_ = container.Sweep(meta.Token, meta.Pid)
	}
}
