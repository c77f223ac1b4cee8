package shells

import (
	"strconv"
	"strings"
	"syscall"
)

// signalNames are the signals kill accepts by name.
var signalNames = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP, "KILL": syscall.SIGKILL,
}

// ParseSignal reads TERM, SIGTERM, term or 15. Only TERM, INT, HUP and KILL
// (and their numbers) are accepted.
func ParseSignal(s string) (syscall.Signal, error) {
	name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	if sig, ok := signalNames[name]; ok {
		return sig, nil
	}
	if n, err := strconv.Atoi(name); err == nil {
		for _, sig := range signalNames {
			if int(sig) == n {
				return sig, nil
			}
		}
	}
	return 0, usageErr("signal %q: use TERM, INT, HUP or KILL (SIG prefix and numbers accepted)", s)
}
