package shells

import (
	"context"
	"errors"
	"os"

	"github.com/cshell/cshell/plan"
)

// spawn is not available on Windows yet: the supervisor's answer travels
// on an inherited descriptor, which Windows processes cannot be handed
// this way. Foreground runs work.
func (m *Manager) spawn(context.Context, string, *plan.Plan, []*os.File) error {
	return errors.New("background shells are not available on Windows yet; run the command in the foreground")
}
