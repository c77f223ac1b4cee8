package sandbox

import (
	"context"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// dialAddr connects to ap on this machine with a blocking connect of the
// calling goroutine's thread, bounded by ctx's deadline (30 s without):
// no trip through the runtime's poller, whose wake-ups cost a connection
// made for a shell more than the connect itself.
func dialAddr(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
	var family int
	var sa unix.Sockaddr
	if a := ap.Addr().Unmap(); a.Is4() {
		family, sa = unix.AF_INET, &unix.SockaddrInet4{Port: int(ap.Port()), Addr: a.As4()}
	} else {
		family, sa = unix.AF_INET6, &unix.SockaddrInet6{Port: int(ap.Port()), Addr: a.As16(), ZoneId: zoneID(a.Zone())}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	left := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		left = time.Until(d)
	}
	if left <= 0 {
		unix.Close(fd)
		return nil, context.DeadlineExceeded
	}
	tv := unix.NsecToTimeval(left.Nanoseconds())
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv)
	for {
		err = unix.Connect(fd, sa)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		unix.Close(fd)
		if err == unix.EINPROGRESS || err == unix.EAGAIN { // the timeout
			err = unix.ETIMEDOUT
		}
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: os.NewSyscallError("connect", err)}
	}
	zero := unix.Timeval{}
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &zero)
	f := os.NewFile(uintptr(fd), "dial")
	defer f.Close()
	return net.FileConn(f)
}

// zoneID is a link-local address's interface index (0: none).
func zoneID(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}
