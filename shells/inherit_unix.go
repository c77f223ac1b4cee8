//go:build unix

package shells

import "os"

// The supervisor's inherited descriptors.
const (
	answerFD        = 3 // its one word to run -d (it writes)
	stateDirFD      = 4 // the state dir, as run -d opened and checked it
	planFD          = 5 // the shell's plan (it reads to EOF): never on disk, as it holds the environment
	firstListenerFD = 6 // the bound exposed ports, in the plan's order, then the caches' lock
)

// inheritedFiles are the supervisor's descriptors, at their fixed numbers.
func inheritedFiles(args []string) (inherited, []string) {
	return inherited{
		answer:   os.NewFile(answerFD, "answer"),
		stateDir: os.NewFile(stateDirFD, "state dir"),
		plan:     os.NewFile(planFD, "plan"),
		file:     func(i int, name string) *os.File { return os.NewFile(uintptr(firstListenerFD+i), name) },
	}, args
}
