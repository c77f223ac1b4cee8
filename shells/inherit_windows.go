package shells

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// inheritedFiles are the supervisor's handles: run -d names them in a
// third argument, "ANSWER,PLAN" (a Windows child inherits handles by
// value, not at fixed numbers). The state dir is opened by its path:
// Windows shells run in the process runner, with no container to plant
// a link. Bad or missing handles leave the answer and the plan unset, and
// the supervisor fails on its arguments.
func inheritedFiles(args []string) (inherited, []string) {
	if len(args) != 3 {
		return inherited{file: noFile}, args
	}
	parts := strings.Split(args[2], ",")
	if len(parts) != 2 {
		return inherited{file: noFile}, args
	}
	var h [2]uintptr
	for i, p := range parts {
		v, err := strconv.ParseUint(p, 10, 64)
		if err != nil || v == 0 {
			return inherited{file: noFile}, args
		}
		h[i] = uintptr(v)
	}
	return inherited{
		answer: os.NewFile(h[0], "answer"),
		plan:   os.NewFile(h[1], "plan"),
		file:   noFile,
	}, args[:2]
}

// noFile: nothing past the plan is handed over on Windows (no relayed
// ports, no caches' lock).
func noFile(int, string) *os.File { return nil }

// handleArg is inheritedFiles' third argument.
func handleArg(answer, plan uintptr) string { return fmt.Sprintf("%d,%d", answer, plan) }
