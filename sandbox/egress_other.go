//go:build !linux

package sandbox

import (
	"context"
	"os"

	"github.com/cshell/cshell/netrelay"
	"github.com/cshell/cshell/policy"
)

// Without a network namespace of its own a shell dials this machine's
// network directly: there is no egress to make and no resolver to run.

type egressState struct{}

func (s *Sandbox) prepareEgress(context.Context, *Proxy, int) (*egressState, error) {
	return nil, netrelay.ErrNoFactory
}

func (s *Sandbox) serveCalls(context.Context, *egressState, *os.File, policy.Filesystem, func(policy.Violation)) {
}
