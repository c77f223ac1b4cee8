//go:build unix && !linux

package shells

import (
	"os"
	"syscall"
)

func signalZero(p *os.Process) error { return p.Signal(syscall.Signal(0)) }
