//go:build !linux

package shells

import (
	"fmt"
	"path/filepath"
)

// withShortPath calls f with dir/name, which must fit a socket address.
func withShortPath(dir, name string, f func(string) error) error {
	p := filepath.Join(dir, name)
	if len(p) >= 100 {
		return fmt.Errorf("the state dir's path is too long for a control socket (%d bytes); use a shorter --state-dir", len(p))
	}
	return f(p)
}
