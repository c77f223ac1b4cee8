//go:build unix && !linux

package container

import "syscall"

// setParentDeath does nothing here: only Linux has a parent-death signal.
func setParentDeath(*syscall.SysProcAttr) {}

// Sweep cannot find a shell's processes here (no /proc to read their
// environment): it kills nothing.
func Sweep(token string, pgid int) []int { return nil }
