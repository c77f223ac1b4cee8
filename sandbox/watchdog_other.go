//go:build !linux

package sandbox

import (
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// watchdog does nothing here: limits need a container, which needs Linux.
type watchdog struct{}

func startWatchdog(container.Shell, policy.Limits) *watchdog { return &watchdog{} }
func (*watchdog) Hit() string                                { return "" }
func (*watchdog) Stop()                                      {}
