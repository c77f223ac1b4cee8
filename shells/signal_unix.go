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

// GracefulStop is true here: a kill sends its signal to the shell's
// process group and waits the grace period before KILL.
const GracefulStop = true

// NoGracefulStop is unused here (GracefulStop).
const NoGracefulStop = ""
