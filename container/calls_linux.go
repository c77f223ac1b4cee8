package container

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The calls the syscall filter hands over (seccomp_linux.c, "G" at the
// socket factory): a shell's new user namespaces, its opens with write
// intent, and the modes and attributes that would count on the host. cshell answers them from the host, as the filter's listener
// holder; nothing here runs inside the shell.

// Calls says what to do with the calls handed over.
type Calls struct {
	// Userns hears of a refused new user namespace ("unshare" or
	// "clone"), the first one only; the call fails with EPERM.
	Userns func(call string)
	// Open hears of an open with write intent, before the call goes on
	// as asked (the kernel decides it: this is for telling only), while
	// the caller's /proc entries still lead where it looks. It runs on
	// the listener's thread: it must be quick for the common case.
	Open func(o OpenCall)
	// Refused hears of a call refused for what it would leave on the
	// host (a setuid or setgid mode; an extended attribute where a file
	// capability would count); the call fails with EPERM either way.
	Refused func(r RefusedCall)
}

// RefusedCall is a call refused because what it makes would count on the
// host: a mode with the setuid or setgid bit, or an extended attribute.
type RefusedCall struct {
	Pid  int
	Call string // chmod, openat, setxattr…
	// Path as the caller gave it (relative to its directory unless
	// absolute), "fd N" for a call on a descriptor, "" if unreadable.
	Path  string
	Mode  uint32 // the mode asked for; 0 for an extended attribute
	Xattr bool
}

// OpenCall is an open with write intent (O_WRONLY, O_RDWR, O_CREAT,
// O_TRUNC, O_TMPFILE), as the caller asked it: its path copied from its
// memory when the call was handed over, relative to Dir (a path on this
// machine that leads to the caller's directory: its working directory
// or the directory descriptor it gave, through /proc) unless absolute,
// where Root leads to the caller's root.
type OpenCall struct {
	Pid       int
	Path      string
	Dir, Root string
	Flags     int
}

// seccomp_notif and seccomp_notif_resp (linux/seccomp.h).
type notif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// ServeCalls answers the calls handed over on listener until the shell
// ends (the listener hangs up) or stop is closed; it owns the listener.
func ServeCalls(listener *os.File, c Calls, stop <-chan struct{}) {
	defer listener.Close()
	// One thread of its own, woken by the caller directly (Linux 6.6:
	// the caller's CPU runs the answer while it waits): an open handed
	// over costs a round trip.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, listener.Fd(), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return
	}
	done, waker := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(waker)
		select {
		case <-stop:
			_, _ = unix.Write(wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		case <-done:
		}
	}()
	// The eventfd closes only once its writer is done with it: a write
	// after the close would land in whatever took its number next (in a
	// server starting shells at once, another shell's init pipe: the
	// "crossed descriptors" of 100 concurrent starts).
	defer func() {
		close(done)
		<-waker
		unix.Close(wake)
	}()
	fd := int(listener.Fd())
	var told sync.Once
	var inflight sync.WaitGroup
	defer inflight.Wait()

	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}}
		if _, err := unix.Poll(pfd, -1); err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		if pfd[1].Revents != 0 || pfd[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 {
			return // stopped, or no task is left under the filter
		}
		if pfd[0].Revents&unix.POLLIN == 0 {
			continue
		}
		var n notif
		if err := ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n)); err != nil {
			if err == unix.EINTR || err == unix.ENOENT {
				continue // taken back: the caller was killed meanwhile
			}
			return
		}
		// A setuid or setgid mode, or an extended attribute where none
		// may be set: refused, and told. Before the opens: an open
		// that creates with such a mode must never go on.
		if r, ok := refusedCall(n); ok {
			send(fd, notifResp{id: n.id, error: -int32(unix.EPERM)})
			if c.Refused != nil {
				c.Refused(r)
			}
			continue
		}
		// An open is judged for telling, then goes on as asked.
		if pathArg, flagsArg, ok := openArgs(int(n.nr)); ok {
			if c.Open != nil {
				if o, read := readOpen(n, pathArg, flagsArg); read {
					c.Open(o)
				}
			}
			send(fd, notifResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
			continue
		}
		inflight.Add(1)
		go func() {
			defer inflight.Done()
			answer(fd, n, c, &told)
		}()
	}
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if e != 0 {
		return e
	}
	return nil
}

// answer answers one call.
func answer(fd int, n notif, c Calls, told *sync.Once) {
	r := notifResp{id: n.id}
	switch int(n.nr) {
	case unix.SYS_UNSHARE, unix.SYS_CLONE:
		r.error = -int32(unix.EPERM)
		if c.Userns != nil {
			call := "clone"
			if int(n.nr) == unix.SYS_UNSHARE {
				call = "unshare"
			}
			told.Do(func() { c.Userns(call) })
		}
	default:
		r.error = -int32(unix.ENOSYS)
	}
	send(fd, r)
}

func send(fd int, r notifResp) {
	_ = ioctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&r)) // ENOENT: the caller is gone
}

// readOpen reads an open's path from the caller's memory (at most
// PATH_MAX bytes, up to its NUL); the path is data the caller chose.
func readOpen(n notif, pathArg, flagsArg int) (OpenCall, bool) {
	pid := int(n.pid)
	o := OpenCall{Pid: pid, Flags: unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC, Root: "/proc/" + strconv.Itoa(pid) + "/root"}
	if flagsArg >= 0 {
		o.Flags = int(n.args[flagsArg])
	}
	var ok bool
	if o.Path, ok = readPath(pid, uintptr(n.args[pathArg])); !ok {
		return o, false
	}
	o.Dir = "/proc/" + strconv.Itoa(pid) + "/cwd"
	if pathArg == 1 { // openat: relative to its directory descriptor
		if dirfd := int32(n.args[0]); dirfd != unix.AT_FDCWD {
			o.Dir = "/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.Itoa(int(dirfd))
		}
	}
	return o, true
}

// readPath reads a path from process pid's memory at ptr: at most
// PATH_MAX bytes, up to its NUL; false for an empty or unreadable one.
func readPath(pid int, ptr uintptr) (string, bool) {
	if ptr == 0 {
		return "", false
	}
	var buf [unix.PathMax]byte
	got := 0
	for got < len(buf) {
		// Read up to the end of the page the path starts in, then on: a
		// read across an unmapped page fails whole.
		chunk := min(len(buf)-got, 4096-int((ptr+uintptr(got))%4096))
		k, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[got], Len: uint64(chunk)}},
			[]unix.RemoteIovec{{Base: ptr + uintptr(got), Len: chunk}}, 0)
		if err != nil || k <= 0 {
			return "", false
		}
		if i := indexZero(buf[got : got+k]); i >= 0 {
			return string(buf[:got+i]), got+i > 0
		}
		got += k
	}
	return "", false
}

// setID is the mode bits no file made or changed in a shell may have.
const setID = unix.S_ISUID | unix.S_ISGID

// createBits are the open flags with which an open creates (O_CREAT,
// __O_TMPFILE): only then does its mode count.
const createBits = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY

// refusedCall reports whether the call handed over is one the filter
// hands over only to be refused (seccomp_linux.c, modes_told and
// no_xattr_told): a setuid or setgid mode, or an extended attribute in a
// shell that may not set one. It judges from the registers the kernel
// copied, as the filter did (their low 32 bits), never from memory.
func refusedCall(n notif) (RefusedCall, bool) {
	pid := int(n.pid)
	if call, pathArg, flagsArg, modeArg, ok := modeArgs(int(n.nr)); ok {
		mode := uint32(n.args[modeArg])
		if mode&setID == 0 || flagsArg >= 0 && uint32(n.args[flagsArg])&createBits == 0 {
			return RefusedCall{}, false
		}
		r := RefusedCall{Pid: pid, Call: call, Mode: mode & 0o7777}
		r.Path = callPath(n, pathArg)
		return r, true
	}
	if call, pathArg, ok := xattrArgs(int(n.nr)); ok {
		return RefusedCall{Pid: pid, Call: call, Xattr: true, Path: callPath(n, pathArg)}, true
	}
	return RefusedCall{}, false
}

// modeArgs says whether call nr (named call) sets a file's mode that the
// filter judges (seccomp_linux.c, modes), and which arguments hold its
// path (-1: a descriptor in argument 0), its flags (-1: none; else the
// mode counts only when they create) and its mode.
func modeArgs(nr int) (call string, path, flags, mode int, ok bool) {
	switch nr {
	case unix.SYS_OPENAT:
		return "openat", 1, 2, 3, true
	case unix.SYS_FCHMOD:
		return "fchmod", -1, -1, 1, true
	case unix.SYS_FCHMODAT:
		return "fchmodat", 1, -1, 2, true
	case unix.SYS_FCHMODAT2:
		return "fchmodat2", 1, -1, 2, true
	case unix.SYS_MKNODAT:
		return "mknodat", 1, -1, 2, true
	}
	return legacyModeArgs(nr)
}

// xattrArgs says whether call nr (named call) sets an extended attribute,
// and which argument holds its path (-1: a descriptor in argument 0).
func xattrArgs(nr int) (call string, path int, ok bool) {
	switch nr {
	case unix.SYS_SETXATTR:
		return "setxattr", 0, true
	case unix.SYS_LSETXATTR:
		return "lsetxattr", 0, true
	case unix.SYS_FSETXATTR:
		return "fsetxattr", -1, true
	case unix.SYS_SETXATTRAT:
		return "setxattrat", 1, true
	}
	return "", 0, false
}

// callPath is the path a call names, as the caller gave it, or for a
// descriptor (pathArg -1) "fd N"; "" when it cannot be read.
func callPath(n notif, pathArg int) string {
	if pathArg < 0 {
		return "fd " + strconv.Itoa(int(int32(n.args[0])))
	}
	p, _ := readPath(int(n.pid), uintptr(n.args[pathArg]))
	return p
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}
