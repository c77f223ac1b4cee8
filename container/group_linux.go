package container

import "syscall"

// setParentDeath makes the kernel kill the command when cshell dies.
func setParentDeath(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
