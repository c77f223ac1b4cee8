package shells

import (
	"errors"
	"os"
)

// spawn is not available on Windows yet: the supervisor's answer travels
// on an inherited descriptor, which Windows processes cannot be handed
// this way. Foreground runs work.
func (m *Manager) spawn(string, supervisorSpec, []*os.File) error {
	return errors.New("background shells are not available on Windows yet; run the command in the foreground")
}
