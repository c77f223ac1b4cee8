package shells

import (
	"os"
	"syscall"
)

// sigWinch does not exist on Windows; this value is never delivered.
const sigWinch = syscall.Signal(28)

// forwarded are the signals a foreground run passes on (as a forced stop).
var forwarded = []os.Signal{os.Interrupt, syscall.SIGTERM}
