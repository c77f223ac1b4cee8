// Package safefs reaches the files beneath a directory that is held open
// by descriptor: every name given to a Dir is resolved beneath it, never
// through a symbolic link and never out of it ("..", absolute names), and
// files are opened without blocking on FIFOs and read within a bound. It is
// how cshell touches its own state and the files a shell could have
// written: whatever such a directory holds may have been planted.
//
// A Dir is safe for concurrent use; the files it returns are the caller's.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// tmpSeq numbers this process's temporary files.
var tmpSeq atomic.Uint64

// Errors callers branch on; each is wrapped with the name at fault.
var (
	ErrBadName    = errors.New("not a name beneath the directory")
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
	ErrSymlink    = errors.New("is a symbolic link")
)

// Info is what cshell checks of a file: its type and permissions, owner,
// size and identity.
type Info struct {
	Mode     fs.FileMode
	Size     int64
	Uid      uint32
	Dev, Ino uint64
}

// IsDir reports whether the file is a directory.
func (i Info) IsDir() bool { return i.Mode.IsDir() }

// Same reports whether two infos describe the same file.
func (i Info) Same(o Info) bool { return i.Dev == o.Dev && i.Ino == o.Ino }

// Name returns the path a Dir was opened by, joined with rel: for
// messages only, never to be opened again.
func (d *Dir) Name(rel ...string) string {
	return filepath.Join(append([]string{d.name}, rel...)...)
}

// split checks a relative name and returns its components.
func split(rel string) ([]string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") {
		return nil, fmt.Errorf("%q: %w", rel, ErrBadName)
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return nil, fmt.Errorf("%q: %w", rel, ErrBadName)
		}
	}
	return parts, nil
}

// ReadFile reads a regular file of at most max bytes.
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	f, err := d.OpenFile(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, d.Name(rel), max)
}

// ReadRegular reads the regular file at path, of at most max bytes,
// without following a symlink in its last component and without blocking
// on a FIFO or a device.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRegular(f, path, max)
}

func readRegular(f *os.File, name string, max int64) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, describeType(st.Mode()))}
	}
	if st.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, st.Size(), max)}
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)}
	}
	return b, nil
}

func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// WriteAtomic replaces rel with data: a new temporary file beside it,
// synced, then renamed over it, so readers see the old or the new whole.
func (d *Dir) WriteAtomic(rel string, data []byte, perm fs.FileMode) error {
	parts, err := split(rel)
	if err != nil {
		return err
	}
	parent, base := strings.Join(parts[:len(parts)-1], "/"), parts[len(parts)-1]
	tmp := fmt.Sprintf(".%s.tmp%d-%d", base, os.Getpid(), tmpSeq.Add(1))
	if parent != "" {
		tmp = parent + "/" + tmp
	}
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = d.Rename(tmp, rel)
	}
	if err != nil {
		_ = d.Remove(tmp)
	}
	return err
}

// WriteFile creates or truncates rel and writes data to it.
func (d *Dir) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	f, err := d.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
