package container

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/runc/libcontainer"

	"github.com/cshell/cshell/internal/procstat"

	"golang.org/x/sys/unix"
)

// RuntimeDir is this user's private runtime directory (see runtimeDir),
// made if missing; it holds what must outlive one cshell process but not
// the machine: container state, the shared rootfs, and records that let
// cshell tell its own state dir from a planted one.
func RuntimeDir() (string, error) { return runtimeDir() }

// runtimeDir is this user's private directory for container state and the
// shared rootfs: /run/cshell for root, $XDG_RUNTIME_DIR/cshell, else
// $TMPDIR/cshell-UID. It must belong to us and be closed to others.
func runtimeDir() (string, error) {
	uid := os.Geteuid()
	var dir string
	switch x := os.Getenv("XDG_RUNTIME_DIR"); {
	case uid == 0:
		dir = "/run/cshell"
	case x != "" && ownedBy(x, uid):
		dir = filepath.Join(x, "cshell")
	default:
		dir = filepath.Join(os.TempDir(), "cshell-"+strconv.Itoa(uid))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return "", fmt.Errorf("check %s: %w", dir, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != uid || st.Mode&0o077 != 0 {
		return "", fmt.Errorf("%s must be a directory of yours closed to others (mode 0700); remove it and try again", dir)
	}
	return dir, nil
}

func ownedBy(path string, uid int) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && int(st.Uid) == uid
}

// prepareRootfs makes the container's root: an empty directory per
// top-level host directory (mount points) and the host's top-level
// symlinks (/bin -> usr/bin here), which cannot be bind-mounted.
// Concurrent callers are fine: every step tolerates the others.
func prepareRootfs(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range entries {
		dst := filepath.Join(root, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink("/" + e.Name())
			if err != nil {
				return err
			}
			if cur, err := os.Readlink(dst); err == nil && cur == target {
				continue
			}
			_ = os.Remove(dst)
			if err := os.Symlink(target, dst); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		case e.IsDir():
			if err := os.Mkdir(dst, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	}
	for _, d := range []string{"proc", "dev", "sys", "tmp", "run", ".cshell"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// prepareHidden makes the stand-ins bound over hidden paths: an empty
// directory and an empty file, both mode 0000. Whatever else is found
// under their names (a link, say) is removed, never followed.
func prepareHidden(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, s := range []struct {
		name string
		dir  bool
	}{{"dir", true}, {"file", false}} {
		p := filepath.Join(dir, s.name)
		st, err := os.Lstat(p)
		if err == nil && (st.IsDir() != s.dir || st.Mode()&fs.ModeSymlink != 0 || (!s.dir && !st.Mode().IsRegular())) {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
			err = fs.ErrNotExist
		}
		if errors.Is(err, fs.ErrNotExist) {
			if s.dir {
				err = os.Mkdir(p, 0)
			} else {
				var f *os.File
				if f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_RDONLY|unix.O_NOFOLLOW, 0); err == nil {
					f.Close()
				}
			}
			if err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if st, err = os.Lstat(p); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		if st.Mode().Perm() != 0 && st.Mode()&fs.ModeSymlink == 0 {
			if err := os.Chmod(p, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// collectGarbage destroys the state of containers whose cshell died
// without cleaning up (killed with SIGKILL, say). Container ids carry the
// pid of the cshell that made them: "run-PID-RANDOM".
func collectGarbage(stateRoot string) {
	entries, err := os.ReadDir(stateRoot)
	if err != nil {
		return
	}
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), "-", 3)
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil || pid <= 0 {
			continue
		}
		info, err := e.Info()
		if err != nil || !ownerGone(pid, info.ModTime()) {
			continue
		}
		if c, err := libcontainer.Load(stateRoot, e.Name()); err == nil {
			_ = c.Signal(unix.SIGKILL)
			// Destroy refuses a container whose init still runs: give the
			// kill a moment to land.
			for i := 0; i < 100; i++ {
				if st, err := c.Status(); err != nil || st == libcontainer.Stopped {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			_ = c.Destroy()
		} else {
			_ = os.RemoveAll(filepath.Join(stateRoot, e.Name()))
		}
	}
}

// ownerGone reports whether the cshell with this pid, which last wrote its
// container's state at made, has died: no such process, a zombie its
// parent has not reaped yet (an orphan waits for the machine's init, which
// may be slow to reap), or a process that started after made, which
// reuses the pid.
func ownerGone(pid int, made time.Time) bool {
	if unix.Kill(pid, 0) == unix.ESRCH {
		return true
	}
	st, ok := procstat.Read(pid)
	if !ok {
		_, err := os.Stat("/proc/" + strconv.Itoa(pid))
		return errors.Is(err, fs.ErrNotExist)
	}
	if st.Gone() {
		return true
	}
	// Started has whole seconds of boot time in it, hence the slack.
	started := st.Started()
	return !started.IsZero() && started.After(made.Add(2*time.Second))
}

// socketPair returns two connected unix stream sockets as files.
func socketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "console-parent"), os.NewFile(uintptr(fds[1]), "console-child"), nil
}

// recvFile receives one descriptor sent with SCM_RIGHTS, named by the
// message it came with.
func recvFile(sock *os.File) (*os.File, error) {
	name, fds, err := recvFDs(sock, 1)
	if err != nil {
		return nil, fmt.Errorf("recvmsg: %w", err)
	}
	if len(fds) != 1 {
		return nil, fmt.Errorf("no descriptor received (%d bytes)", len(name))
	}
	return os.NewFile(uintptr(fds[0]), string(name)), nil
}

// recvFDs receives one message and the descriptors sent with it
// (SCM_RIGHTS, close-on-exec here), at most max: any more are closed.
func recvFDs(sock *os.File, max int) ([]byte, []int, error) {
	return recvInto(sock, make([]byte, 4096), max, 0)
}

// recvInto is recvFDs into buf, with more recvmsg flags (MSG_WAITALL
// reads exactly len(buf) bytes of a stream).
func recvInto(sock *os.File, buf []byte, max, flags int) ([]byte, []int, error) {
	oob := make([]byte, unix.CmsgSpace(4*max))
	n, oobn, _, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC|flags)
	if err != nil {
		return nil, nil, err
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for i := range msgs {
			got, _ := unix.ParseUnixRights(&msgs[i])
			for _, fd := range got {
				if len(fds) < max {
					fds = append(fds, fd)
				} else {
					unix.Close(fd)
				}
			}
		}
	}
	return buf[:n], fds, nil
}

// CollectGarbage removes the state of containers whose cshell died.
func CollectGarbage() {
	if dir, err := runtimeDir(); err == nil {
		collectGarbage(filepath.Join(dir, "containers"))
	}
}

// resolvConfText names the shell's own resolver (sandbox.ResolverAddr).
const resolvConfText = "# cshell: the shell's own resolver; only names the shell may reach resolve\nnameserver 127.0.0.53\n"

// hostsText is the shell's /etc/hosts when it has a resolver: loopback
// and its own host name only, so that every other name is asked of the
// shell's resolver, which decides on the name asked for (the host's
// /etc/hosts would give a shell real addresses, which the egress then
// judges as bare addresses).
const hostsText = "# cshell: names the shell may reach are resolved by its own resolver (127.0.0.53)\n" +
	"127.0.0.1\tlocalhost cshell\n::1\tlocalhost ip6-localhost ip6-loopback cshell\n"

// prepareShared writes a file every shell of this user is bound (its
// resolv.conf, its hosts), unless it already holds text: a plain file of
// this user's, replaced whole, never written through a link.
func prepareShared(path, text string) error {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		if b, err := os.ReadFile(path); err == nil && string(b) == text {
			return nil
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if err == nil {
		err = f.Chmod(0o644) // whatever the umask: every user inside reads it
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// CountRunning counts this user's running containers whose id starts
// with prefix and whose owner (sandbox.NewID's PID) lives: cshell doctor
// tells the warm sandboxes of the MCP servers that way.
func CountRunning(prefix string) int {
	dir, err := runtimeDir()
	if err != nil {
		return 0
	}
	stateRoot := filepath.Join(dir, "containers")
	entries, err := os.ReadDir(stateRoot)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), "-", 3)
		if len(parts) != 3 || parts[0] != prefix {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		info, ierr := e.Info()
		if err != nil || pid <= 0 || ierr != nil || ownerGone(pid, info.ModTime()) {
			continue
		}
		if c, err := libcontainer.Load(stateRoot, e.Name()); err == nil {
			if st, err := c.Status(); err == nil && (st == libcontainer.Running || st == libcontainer.Created) {
				n++
			}
		}
	}
	return n
}
