package shells

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// withShortPath calls f with a name for dir/name that fits a unix socket
// address (108 bytes): the path itself, or /proc/self/fd/N/name through an
// open descriptor of dir when the state dir's path is long.
func withShortPath(dir, name string, f func(string) error) error {
	p := filepath.Join(dir, name)
	if len(p) < 100 {
		return f(p)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return f(fmt.Sprintf("/proc/self/fd/%d/%s", fd, name))
}
