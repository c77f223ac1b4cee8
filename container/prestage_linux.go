package container

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The container's init does three things before libcontainer's own
// start-up (MaybeInit), where it alone holds every capability over the
// shell's namespaces: it covers hidden paths with their stand-ins
// (coverAll), binds the top-level directories and the policy's binds
// under them into the root (bindTop), and makes the egress's rules
// (redirect). It is asked on a socket pair whose child end is its fd 5
// (after the factory and the events pipe, before anything libcontainer
// passes), recognised by prestageHello waiting on it, followed by the
// request's length (4 bytes, host order) and the request (JSON). It
// answers "ok" (with the netfilter socket when it made the rules), or why
// not, and goes on.
const (
	prestageFD    = 5
	prestageHello = "cshell-prestage-1\n"
	maxPrestage   = 16 << 20
)

// prestage is what the init is asked to do.
type prestage struct {
	Redirect bool `json:"redirect,omitempty"`
	// NetNS: send the network namespace first (netnsHello and the
	// namespace's descriptor), before the rest: cshell makes the egress's
	// rules in it meanwhile (root: rulesFromParent).
	NetNS bool      `json:"netns,omitempty"`
	Hide  []standIn `json:"hide,omitempty"`
	// Root and Top: each of this machine's top-level directories (Top,
	// "/usr" say) bound read-only, with everything mounted under it, at
	// its name in the root (Root, the runner's rootfs).
	Root string   `json:"root,omitempty"`
	Top  []string `json:"top,omitempty"`
	// Binds are the policy's binds under them, shallowest first.
	Binds []earlyBind `json:"binds,omitempty"`
}

// prestagePair makes the socket pair that asks the init, the request
// written on the parent's end (in the background: the init reads it as
// it starts; a request past the socket's buffer waits for it).
func prestagePair(req prestage) (parent, child *os.File, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	parent, child, err = socketPair()
	if err != nil {
		return nil, nil, err
	}
	msg := binary.NativeEndian.AppendUint32([]byte(prestageHello), uint32(len(body)))
	msg = append(msg, body...)
	if len(msg) <= 64<<10 {
		if _, err := parent.Write(msg); err != nil {
			parent.Close()
			child.Close()
			return nil, nil, err
		}
		return parent, child, nil
	}
	go parent.Write(msg) //nolint:errcheck // ends when the init read it, or the pair closed
	return parent, child, nil
}

// RulesPair makes the pair that asks an init for the egress's rules
// alone: a runner of its own (the tests') hands the child as fd 5 to a
// process that calls MaybePrestage, then reads the answer (PrestageDone).
func RulesPair() (parent, child *os.File, err error) {
	return prestagePair(prestage{Redirect: true})
}

// PrestageDone reads the init's answer: once it did what it was asked, a
// netlink socket (netfilter) of the shell's namespace, opened by the
// init, with which its connection tracking can be read (nil without the
// rules, or when the init could not open one).
func PrestageDone(parent *os.File) (*os.File, error) {
	defer parent.Close()
	msg, fds, err := recvFDs(parent, 1)
	if err != nil || len(msg) == 0 {
		return nil, fmt.Errorf("the container's init gave no answer (%v)", err)
	}
	var tracker *os.File
	if len(fds) == 1 {
		tracker = os.NewFile(uintptr(fds[0]), "conntrack")
	}
	if text := strings.TrimSpace(string(msg)); text != "ok" {
		if tracker != nil {
			tracker.Close()
		}
		return nil, errors.New(text)
	}
	return tracker, nil
}

// MaybePrestage does what the init was asked (the hello on fd 5), and
// answers there; any other process, or an init not asked, does nothing.
// MaybeInit calls it in the container's init.
func MaybePrestage() {
	var st unix.Stat_t
	if unix.Fstat(prestageFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return
	}
	buf := make([]byte, len(prestageHello))
	n, _, err := unix.Recvfrom(prestageFD, buf, unix.MSG_PEEK|unix.MSG_DONTWAIT)
	if err != nil || string(buf[:n]) != prestageHello {
		return // one of libcontainer's own
	}
	f := os.NewFile(prestageFD, "prestage")
	defer f.Close()
	answer, rights := "ok\n", []byte(nil)
	if err := doPrestage(f); err != nil {
		answer = strings.ReplaceAll(err.Error(), "\n", " ") + "\n"
	} else if nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER); err == nil {
		rights = unix.UnixRights(nl) // opened with CAP_NET_ADMIN here: cshell may ask with it
		defer unix.Close(nl)
	}
	_ = unix.Sendmsg(prestageFD, []byte(answer), rights, nil, 0)
}

// doPrestage reads the request and carries it out.
func doPrestage(f *os.File) error {
	head := make([]byte, len(prestageHello)+4)
	if _, err := io.ReadFull(f, head); err != nil {
		return fmt.Errorf("read the request: %w", err)
	}
	size := binary.NativeEndian.Uint32(head[len(prestageHello):])
	if size > maxPrestage {
		return fmt.Errorf("a request of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(f, body); err != nil {
		return fmt.Errorf("read the request: %w", err)
	}
	var req prestage
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("read the request: %w", err)
	}
	if req.NetNS {
		if err := sendNetNS(); err != nil {
			return fmt.Errorf("send the network namespace: %w", err)
		}
	}
	if len(req.Hide) > 0 {
		if err := coverAll(req.Hide); err != nil {
			return err
		}
	}
	if len(req.Top) > 0 {
		if err := bindTop(req.Root, req.Top, req.Binds); err != nil {
			return err
		}
	}
	if req.Redirect {
		if err := redirect(-1); err != nil {
			return fmt.Errorf("the shell's way out for direct connections (nftables in its network namespace): %w", err)
		}
	}
	return nil
}

// netnsHello comes with the init's network namespace (prestage.NetNS).
const netnsHello = "netns\n"

// sendNetNS sends this thread's network namespace on the request's socket.
func sendNetNS() error {
	ns, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ns)
	return unix.Sendmsg(prestageFD, []byte(netnsHello), unix.UnixRights(ns), nil, 0)
}

// rulesFromParent makes the egress's rules (redirect) in the network
// namespace the init sends first on parent (prestage.NetNS), from this
// process: as root it may enter it. It reads exactly that first message,
// so that the init's answer (PrestageDone) stays on the socket.
func rulesFromParent(parent *os.File) error {
	msg, fds, err := recvInto(parent, make([]byte, len(netnsHello)), 1, unix.MSG_WAITALL)
	if err != nil {
		return fmt.Errorf("receive the network namespace: %w", err)
	}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if string(msg) != netnsHello || len(fds) != 1 {
		// The init failed before it could send it: this is its answer.
		rest, more, _ := recvFDs(parent, 1)
		for _, fd := range more {
			unix.Close(fd)
		}
		return fmt.Errorf("the container's init could not prepare the shell: %s", strings.TrimSpace(string(msg)+string(rest)))
	}
	if err := redirect(fds[0]); err != nil {
		return fmt.Errorf("the shell's way out for direct connections (nftables in its network namespace): %w", err)
	}
	return nil
}

// bindTop binds each top-level directory of this machine, recursively and
// read-only (every mount under it too), at its name in the root, then the
// policy's binds under them, each reached beneath the root with no
// symbolic link on the way. After the stand-ins: the copies carry them.
// libcontainer's recursive bind of the root carries these in turn.
func bindTop(root string, top []string, binds []earlyBind) error {
	rootFD, err := unix.Openat2(unix.AT_FDCWD, root, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return fmt.Errorf("open the root %s: %w", root, err)
	}
	defer unix.Close(rootFD)
	for _, dir := range top {
		if name := strings.TrimPrefix(dir, "/"); name == "" || strings.Contains(name, "/") {
			return fmt.Errorf("bind %s: not a top-level directory", dir)
		}
		if err := bindInto(rootFD, earlyBind{Dest: dir, Source: dir}); err != nil {
			return fmt.Errorf("bind %s: %w", dir, err)
		}
	}
	for _, b := range binds {
		if err := bindInto(rootFD, b); err != nil {
			return fmt.Errorf("bind %s: %w", b.Dest, err)
		}
	}
	return nil
}

func bindInto(rootFD int, b earlyBind) error {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	src, err := unix.Openat2(unix.AT_FDCWD, b.Source, how)
	if err != nil {
		return err
	}
	defer unix.Close(src)
	how.Resolve |= unix.RESOLVE_BENEATH
	target, err := unix.Openat2(rootFD, strings.TrimPrefix(b.Dest, "/"), how)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	tree, err := unix.OpenTree(src, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE|unix.AT_EMPTY_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(tree)
	if b.Writable {
		return place(tree, target, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false)
	}
	return place(tree, target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, true)
}

// place sets attr on a detached copy of mounts (open_tree), on its top
// mount or, recursive, on every mount it holds, and moves it onto target.
func place(tree, target int, attr uint64, recursive bool) error {
	flags := unix.AT_EMPTY_PATH
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(tree, "", uint(flags), &unix.MountAttr{Attr_set: attr}); err != nil {
		return err
	}
	return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// coverAll mounts each stand-in over its path, read-only, in this (the
// container's) mount namespace, made a slave first so that nothing
// mounted here reaches this machine's: the binds libcontainer makes next
// carry them into the shell's root.
func coverAll(hide []standIn) error {
	if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	for _, h := range hide {
		if err := cover(h); err != nil {
			return fmt.Errorf("hide %s: %w", h.Dest, err)
		}
	}
	return nil
}

// cover mounts one stand-in: a detached copy of it, made read-only with
// no exec, setuid or devices, moved onto the path, which is reached with
// no symbolic link on the way (one put there since the policy resolved
// it would lead the stand-in elsewhere).
func cover(h standIn) error {
	target, err := unix.Openat2(unix.AT_FDCWD, h.Dest, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return err
	}
	defer unix.Close(target)
	tree, err := unix.OpenTree(unix.AT_FDCWD, h.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("copy the stand-in: %w", err)
	}
	defer unix.Close(tree)
	return place(tree, target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, false)
}
