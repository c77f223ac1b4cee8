package shells

import (
	"os"
	"syscall"
)

// sigWinch does not exist on Windows; this value is never delivered.
const sigWinch = syscall.Signal(28)

// forwarded are the signals a foreground run passes on (as a forced stop).
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM}

// GracefulStop is false on Windows: a shell has no signal to catch, and a
// kill ends its whole process tree at once (its job object), whatever
// signal is asked for.
const GracefulStop = false

// NoGracefulStop is the sentence for a signal other than KILL asked for
// on Windows.
const NoGracefulStop = "Windows has no graceful signal: cshell kill ends the shell's whole process tree at once (its job object); leave out --signal, or give KILL"
