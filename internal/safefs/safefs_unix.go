//go:build unix

package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is a directory held open by descriptor.
type Dir struct {
	f    *os.File
	fd   int
	name string
}

// Open opens the directory at path; its last component must not be a
// symbolic link.
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: notDirErr(err)}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), fd: fd, name: path}, nil
}

// FromFile takes over f, an open directory (inherited from a parent, say);
// name is for messages.
func FromFile(f *os.File, name string) (*Dir, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, &fs.PathError{Op: "open", Path: name, Err: unix.ENOTDIR}
	}
	return &Dir{f: f, fd: int(f.Fd()), name: name}, nil
}

// notDirErr names what ELOOP means with O_NOFOLLOW: a symbolic link.
func notDirErr(err error) error {
	if errors.Is(err, unix.ELOOP) {
		return fmt.Errorf("%w (%w)", ErrSymlink, err)
	}
	return err
}

// File is the directory's descriptor, to hand to a child process.
func (d *Dir) File() *os.File { return d.f }

// Close closes the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

// Info describes the directory itself.
func (d *Dir) Info() (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Info{}, &fs.PathError{Op: "stat", Path: d.name, Err: err}
	}
	return infoOf(&st), nil
}

// Chmod sets the directory's own permissions.
func (d *Dir) Chmod(perm fs.FileMode) error {
	if err := unix.Fchmod(d.fd, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.name, Err: err}
	}
	return nil
}

// OpenFile opens rel beneath d with the flags of os.OpenFile. No component
// may be a symbolic link; a FIFO or device opens without blocking.
func (d *Dir) OpenFile(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	parts, err := split(rel)
	if err != nil {
		return nil, err
	}
	flag |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	if flag&unix.O_DIRECTORY == 0 {
		flag |= unix.O_NONBLOCK
	}
	fd, err := openBeneath(d.fd, rel, parts, flag, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.Name(rel), Err: notDirErr(err)}
	}
	if flag&unix.O_DIRECTORY == 0 {
		// Non-blocking was for the open; regular files read as usual.
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl&^unix.O_NONBLOCK)
		}
	}
	return os.NewFile(uintptr(fd), d.Name(rel)), nil
}

// walk opens rel one component at a time, none followed if a link.
func walk(dirfd int, parts []string, flag int, perm uint32) (int, error) {
	cur := dirfd
	for i, p := range parts {
		last := i == len(parts)-1
		fl, pm := unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(0)
		if last {
			fl, pm = flag, perm
		}
		fd, err := unix.Openat(cur, p, fl, pm)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

// Sub opens the directory rel beneath d.
func (d *Dir) Sub(rel string) (*Dir, error) {
	f, err := d.OpenFile(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	return &Dir{f: f, fd: int(f.Fd()), name: d.Name(rel)}, nil
}

// parent opens the directory holding rel and returns it with rel's last
// name; done closes what was opened.
func (d *Dir) parent(rel string) (int, string, func(), error) {
	parts, err := split(rel)
	if err != nil {
		return -1, "", nil, err
	}
	if len(parts) == 1 {
		return d.fd, parts[0], func() {}, nil
	}
	dir := parts[:len(parts)-1]
	fd, err := openBeneath(d.fd, strings.Join(dir, "/"), dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", nil, &fs.PathError{Op: "open", Path: d.Name(rel), Err: notDirErr(err)}
	}
	return fd, parts[len(parts)-1], func() { unix.Close(fd) }, nil
}

// Mkdir makes the directory rel.
func (d *Dir) Mkdir(rel string, perm fs.FileMode) error {
	pfd, base, done, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Mkdirat(pfd, base, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.Name(rel), Err: err}
	}
	return nil
}

// Remove removes rel: a file, link, socket or empty directory.
func (d *Dir) Remove(rel string) error {
	pfd, base, done, err := d.parent(rel)
	if err != nil {
		return err
	}
	defer done()
	err = unix.Unlinkat(pfd, base, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		err = unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: d.Name(rel), Err: err}
	}
	return nil
}

// RemoveAll removes rel and everything beneath it, never following a
// link out (a folder of this user's that it may not write is made
// writable on the way); a missing rel is no error.
func (d *Dir) RemoveAll(rel string) error {
	pfd, base, done, err := d.parent(rel)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	if err := removeAll(pfd, base); err != nil {
		return &fs.PathError{Op: "remove", Path: d.Name(rel), Err: err}
	}
	return nil
}

func removeAll(pfd int, name string) error {
	err := unix.Unlinkat(pfd, name, 0)
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		return err
	}
	fd, err := unix.Openat(pfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	// A folder made read-only (Go's module cache makes its own so) keeps
	// its entries from this user: make it ours to empty first.
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && st.Mode&0o300 != 0o300 {
		_ = unix.Fchmod(fd, 0o700)
	}
	for {
		names, err := f.Readdirnames(256)
		for _, n := range names {
			if err := removeAll(fd, n); err != nil {
				return err
			}
		}
		if err != nil || len(names) == 0 {
			break
		}
	}
	err = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// Rename renames from to to, both beneath d.
func (d *Dir) Rename(from, to string) error {
	pf, bf, donef, err := d.parent(from)
	if err != nil {
		return err
	}
	defer donef()
	pt, bt, donet, err := d.parent(to)
	if err != nil {
		return err
	}
	defer donet()
	if err := unix.Renameat(pf, bf, pt, bt); err != nil {
		return &os.LinkError{Op: "rename", Old: d.Name(from), New: d.Name(to), Err: err}
	}
	return nil
}

// Lstat describes rel itself (a link is not followed).
func (d *Dir) Lstat(rel string) (Info, error) {
	pfd, base, done, err := d.parent(rel)
	if err != nil {
		return Info{}, err
	}
	defer done()
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, &fs.PathError{Op: "lstat", Path: d.Name(rel), Err: err}
	}
	return infoOf(&st), nil
}

// Names lists the names in d (rel "") or in its subdirectory rel.
func (d *Dir) Names(rel string) ([]string, error) {
	var f *os.File
	if rel == "" {
		fd, err := unix.Openat(d.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: d.name, Err: err}
		}
		f = os.NewFile(uintptr(fd), d.name)
	} else {
		var err error
		if f, err = d.OpenFile(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0); err != nil {
			return nil, err
		}
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// openNoFollow opens path for reading, without following a link in its
// last component and without blocking.
func openNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: notDirErr(err)}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func infoOf(st *unix.Stat_t) Info {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return Info{Mode: m, Size: int64(st.Size), Uid: st.Uid, Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}
