package shells

import "fmt"

// Clean removes the folders of finished shells and returns how many.
func (m *Manager) Clean() (int, error) {
	n := 0
	for _, meta := range m.List() {
		if !meta.Finished() {
			continue
		}
		if err := m.dir.RemoveAll(shellFile(meta.ID)); err != nil {
			return n, fmt.Errorf("remove shell %s: %w", meta.ID, err)
		}
		n++
	}
	return n, nil
}
