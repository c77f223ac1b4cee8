//go:build unix

package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// plantable reports whether a shell started by this user could have made
// the symbolic link at path: the link is this user's, or lies in a
// directory this user may write (judged by its permission bits, as a
// shell, which holds no capability, would be: so for root too). A link in
// a sticky directory (/tmp) counts only when it is this user's.
func plantable(path string, link fs.FileInfo) bool {
	uid := os.Geteuid()
	if st, ok := link.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
		return true
	}
	dir, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return true
	}
	st, ok := dir.Sys().(*syscall.Stat_t)
	if !ok || dir.Mode()&fs.ModeSticky != 0 {
		return false
	}
	groups, _ := os.Getgroups()
	switch {
	case int(st.Uid) == uid:
		return st.Mode&0o200 != 0
	case int(st.Gid) == os.Getegid() || slices.Contains(groups, int(st.Gid)):
		return st.Mode&0o020 != 0
	}
	return st.Mode&0o002 != 0
}

// searchable reports whether this user may look up names in dir; a
// directory that does not exist counts as searchable (there is nothing in
// the way to judge).
func searchable(dir string) bool {
	err := syscall.Access(dir, 1) // X_OK
	return err == nil || !errors.Is(err, syscall.EACCES)
}
