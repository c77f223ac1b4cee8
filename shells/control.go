package shells

import (
	"context"
	"fmt"

	"github.com/cshell/cshell/control"
)

// dialControl connects to a shell's supervisor (control.Dial checks that
// it is one).
func (m *Manager) dialControl(ctx context.Context, id string) (*control.Conn, error) {
	d, err := m.shellDir(id)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	c, err := control.Dial(ctx, d, controlName)
	if err != nil {
		return nil, fmt.Errorf("shell %s: %w", id, err)
	}
	return c, nil
}
