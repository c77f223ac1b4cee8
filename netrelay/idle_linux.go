package netrelay

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// closeWhenIdle closes both connections once no byte has moved through
// them for idle. It watches the kernel's counters (TCP_INFO) rather than
// the bytes, so that the copy keeps splicing. The returned func stops it.
func closeWhenIdle(a, b net.Conn, idle time.Duration) func() {
	done := make(chan struct{})
	go func() {
		every := min(idle/4, 30*time.Second)
		t := time.NewTicker(every)
		defer t.Stop()
		last, quietSince := traffic(a)+traffic(b), time.Now()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := traffic(a) + traffic(b)
			if now != last {
				last, quietSince = now, time.Now()
				continue
			}
			if time.Since(quietSince) >= idle {
				a.Close()
				b.Close()
				return
			}
		}
	}()
	return func() { close(done) }
}

// traffic is what a TCP connection has received and sent, as the kernel
// counts it; 0 when it cannot be read.
func traffic(c net.Conn) uint64 {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	var n uint64
	_ = rc.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			n = info.Bytes_received + info.Bytes_acked
		}
	})
	return n
}
