//go:build unix

package cache

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/internal/safefs"
)

// lockShared takes a shared lock on f, waiting while a removal holds it.
func lockShared(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_SH)
		if err != unix.EINTR {
			return err
		}
	}
}

// lockExclusive takes an exclusive lock on f at once, or fails.
func lockExclusive(f *os.File) error {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
}

func sameFile(fi fs.FileInfo, info safefs.Info) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == info.Dev && uint64(st.Ino) == info.Ino
}

// size counts the bytes the files beneath rel take on disk, never
// following a link, spending at most *budget entries.
func (s *Store) size(rel string, budget *int) (int64, bool) {
	f, err := s.dir.OpenFile(rel, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	return sizeAt(int(f.Fd()), f, budget)
}

func sizeAt(fd int, f *os.File, budget *int) (total int64, partial bool) {
	for {
		names, err := f.Readdirnames(512)
		for _, n := range names {
			if *budget <= 0 {
				return total, true
			}
			*budget--
			var st unix.Stat_t
			if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			total += st.Blocks * 512
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			sub, err := unix.Openat(fd, n, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			sf := os.NewFile(uintptr(sub), n)
			n, p := sizeAt(sub, sf, budget)
			sf.Close()
			total += n
			if p {
				return total, true
			}
		}
		if err != nil || len(names) == 0 {
			return total, false
		}
	}
}
