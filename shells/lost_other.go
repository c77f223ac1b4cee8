//go:build !linux

package shells

// lost tidies after a shell whose supervisor died: its exposing mark. Its
// command had a parent-death signal where the system has one; a record
// names no process cshell can prove it started, so none is signalled.
func (m *Manager) lost(meta *Meta) {
	_ = m.dir.Remove(exposingName + "/" + meta.ID)
}
