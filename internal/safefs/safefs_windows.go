package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// Dir is a directory held open by handle. Windows has no container
// shells to plant links, so os.Root, which keeps names beneath the
// directory, is enough here.
type Dir struct {
	root *os.Root
	name string
}

// Open opens the directory at path.
func Open(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, name: path}, nil
}

// FromFile is not available on Windows: no child inherits a directory.
func FromFile(f *os.File, name string) (*Dir, error) {
	return nil, fmt.Errorf("open %s: inherited directories need a unix system", name)
}

// Info describes the directory itself.
func (d *Dir) Info() (Info, error) { return d.Lstat(".") }

// Chmod sets the directory's own permissions.
func (d *Dir) Chmod(perm fs.FileMode) error { return d.root.Chmod(".", perm) }

// OpenFile opens rel beneath d with the flags of os.OpenFile.
func (d *Dir) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	if _, err := split(rel); err != nil && rel != "." {
		return nil, err
	}
	return d.root.OpenFile(rel, flag, perm)
}

// Sub opens the directory rel beneath d.
func (d *Dir) Sub(rel string) (*Dir, error) {
	if _, err := split(rel); err != nil {
		return nil, err
	}
	r, err := d.root.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, name: d.Name(rel)}, nil
}

// File is nil on Windows: no child inherits a directory.
func (d *Dir) File() *os.File { return nil }

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Mkdir makes the directory rel.
func (d *Dir) Mkdir(rel string, perm fs.FileMode) error {
	if _, err := split(rel); err != nil {
		return err
	}
	return d.root.Mkdir(rel, perm)
}

// Remove removes rel.
func (d *Dir) Remove(rel string) error {
	if _, err := split(rel); err != nil {
		return err
	}
	return d.root.Remove(rel)
}

// RemoveAll removes rel and everything beneath it.
func (d *Dir) RemoveAll(rel string) error {
	if _, err := split(rel); err != nil {
		return err
	}
	return d.root.RemoveAll(rel)
}

// Rename renames from to to, both beneath d. Windows refuses to replace a
// file that is open, even one opened with FILE_SHARE_DELETE as a Dir opens
// files (a reader of a shell's record, say), so a refused rename is tried
// again until renameWait has passed; readers hold such files for moments
// only.
func (d *Dir) Rename(from, to string) error {
	if _, err := split(from); err != nil {
		return err
	}
	if _, err := split(to); err != nil {
		return err
	}
	deadline := time.Now().Add(renameWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 50*time.Millisecond) {
		err := d.root.Rename(from, to)
		if err == nil || !heldOpen(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
	}
}

// renameWait bounds how long Rename waits for another process to let go.
const renameWait = 2 * time.Second

// heldOpen reports whether err is Windows refusing to replace or move a
// file that is open elsewhere.
func heldOpen(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

// Lstat describes rel itself.
func (d *Dir) Lstat(rel string) (Info, error) {
	if _, err := split(rel); err != nil && rel != "." {
		return Info{}, err
	}
	st, err := d.root.Lstat(rel)
	if err != nil {
		return Info{}, err
	}
	return Info{Mode: st.Mode(), Size: st.Size()}, nil
}

// Names lists the names in d (rel "") or in its subdirectory rel.
func (d *Dir) Names(rel string) ([]string, error) {
	if rel == "" {
		rel = "."
	}
	f, err := d.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// SocketPath names rel as a unix socket address: its path.
func (d *Dir) SocketPath(rel string) (string, error) {
	if _, err := split(rel); err != nil {
		return "", err
	}
	return d.Name(rel), nil
}

func openNoFollow(path string) (*os.File, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
	}
	return os.Open(path)
}
