//go:build unix

package shells

import (
	"os"
	"syscall"
)

// sigWinch tells of a terminal resize.
const sigWinch = syscall.SIGWINCH

// forwarded are the signals a foreground run passes on to its command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2}
