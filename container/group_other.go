//go:build unix && !linux

package container

import "syscall"

// setParentDeath does nothing here: only Linux has a parent-death signal.
func setParentDeath(*syscall.SysProcAttr) {}
