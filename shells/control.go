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

// Adopt makes this process the owner of the running shells of session
// that were started with a reattach window (an MCP server's, whose server
// ended or is about to): they end when it ends, or wait for the next. The
// session is the supervisor's word, never a record's. It returns the
// shells taken over; one that could not be is left as it was.
func (m *Manager) Adopt(ctx context.Context, session string) []*Meta {
	var took []*Meta
	for _, meta := range m.List() {
		if meta.Finished() || meta.Session != session || meta.OwnerPid == 0 {
			continue
		}
		if info, _, err := m.askInfo(ctx, meta.ID); err != nil || info.Session != session {
			continue
		}
		c, err := m.dialControl(ctx, meta.ID)
		if err != nil {
			continue
		}
		err = c.Adopt(ctx)
		c.Close()
		if err != nil {
			m.log.Info("a shell was not taken over", "id", meta.ID, "err", err)
			continue
		}
		if cur, err := m.Find(meta.ID); err == nil {
			meta = cur
		}
		took = append(took, meta)
	}
	return took
}
