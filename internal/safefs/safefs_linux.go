package safefs

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel beneath dirfd with openat2, which refuses links
// and escapes in one call; component by component where the kernel, or a
// container engine's syscall filter, refuses openat2 (ENOSYS, EPERM: the
// walk then gives the file's own answer).
func openBeneath(dirfd int, rel string, parts []string, flag int, perm uint32) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flag), Mode: uint64(perm),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flag&unix.O_CREAT == 0 {
		how.Mode = 0 // openat2 refuses a mode without O_CREAT
	}
	fd, err := unix.Openat2(dirfd, rel, how)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		return walk(dirfd, parts, flag, perm)
	}
	return fd, err
}

// SocketPath names rel as a unix socket address through the directory's
// descriptor (/proc/self/fd/N/rel): short whatever the directory's path,
// and bound to this directory, not to whatever its path names now. The
// kernel looks the name up again at connect and bind, so a caller that
// connects checks first (Lstat) that a socket is there.
func (d *Dir) SocketPath(rel string) (string, error) {
	if _, err := split(rel); err != nil {
		return "", err
	}
	p := fmt.Sprintf("/proc/self/fd/%d/%s", d.fd, rel)
	if len(p) >= 100 {
		return "", fmt.Errorf("socket %s: the name is too long for a socket address (%d bytes)", d.Name(rel), len(p))
	}
	return p, nil
}
