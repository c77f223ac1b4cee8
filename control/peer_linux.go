package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// supervisorPeer checks the process at the other end of a control socket
// (SO_PEERCRED, which the kernel fills in): this user's, and in our PID
// namespace. It returns its pid.
func supervisorPeer(c net.Conn) (int, error) {
	cred, err := peerCred(c)
	if err != nil {
		return 0, err
	}
	if int(cred.Uid) != os.Geteuid() {
		return 0, fmt.Errorf("it is served by uid %d", cred.Uid)
	}
	if cred.Pid <= 0 {
		return 0, errors.New("it is served from another PID namespace")
	}
	theirs, err1 := os.Readlink("/proc/" + strconv.Itoa(int(cred.Pid)) + "/ns/pid")
	ours, err2 := os.Readlink("/proc/self/ns/pid")
	if err1 != nil || err2 != nil || theirs != ours {
		return 0, fmt.Errorf("it is served by pid %d, which runs in another PID namespace (a shell's process)", cred.Pid)
	}
	return int(cred.Pid), nil
}

// clientPeer is the pid of the process at the other end of a served
// connection, which must run in our PID namespace.
func clientPeer(c net.Conn) (int, error) {
	cred, err := peerCred(c)
	if err != nil {
		return 0, err
	}
	if cred.Pid <= 0 {
		return 0, errors.New("the asking process runs in another PID namespace")
	}
	return int(cred.Pid), nil
}

// peerCred is what the kernel says of the process at the other end
// (SO_PEERCRED).
func peerCred(c net.Conn) (*unix.Ucred, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	return cred, cerr
}
