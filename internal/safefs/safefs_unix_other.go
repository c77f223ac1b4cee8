//go:build unix && !linux

package safefs

import "fmt"

// openBeneath opens rel beneath dirfd component by component.
func openBeneath(dirfd int, _ string, parts []string, flag int, perm uint32) (int, error) {
	return walk(dirfd, parts, flag, perm)
}

// SocketPath names rel as a unix socket address: its path, which must fit.
func (d *Dir) SocketPath(rel string) (string, error) {
	if _, err := split(rel); err != nil {
		return "", err
	}
	p := d.Name(rel)
	if len(p) >= 100 {
		return "", fmt.Errorf("socket %s: the name is too long for a socket address (%d bytes); use a shorter --state-dir", p, len(p))
	}
	return p, nil
}
