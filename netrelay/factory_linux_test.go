package netrelay

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeInit answers the factory's requests over the other end of a
// socketpair as the shell's init does, each after delay(i) for the i-th.
func fakeInit(t *testing.T, delay func(i int) time.Duration) *Factory {
	t.Helper()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := NewFactory(os.NewFile(uintptr(pair[0]), "factory"))
	t.Cleanup(func() { f.Close() })
	go func() {
		defer unix.Close(pair[1])
		for i := 0; ; i++ {
			req := make([]byte, 2)
			if n, err := unix.Read(pair[1], req); n != 2 || err != nil {
				return
			}
			time.Sleep(delay(i))
			family := unix.AF_INET
			if req[0] == '6' {
				family = unix.AF_INET6
			}
			var fds []int
			for range int(req[1]) {
				s, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
				if err != nil {
					return
				}
				fds = append(fds, s)
			}
			err := unix.Sendmsg(pair[1], []byte{0}, unix.UnixRights(fds...), nil, 0)
			for _, s := range fds {
				unix.Close(s)
			}
			if err != nil {
				return
			}
		}
	}()
	return f
}

// A shell that does not answer makes a request fail after answerTimeout,
// not hang; its late answer is dropped, and the next request gets its own.
func TestFactoryStalledInit(t *testing.T) {
	f := fakeInit(t, func(i int) time.Duration {
		if i == 0 {
			return answerTimeout + 500*time.Millisecond
		}
		return 0
	})
	start := time.Now()
	if fd, err := f.socket(unix.AF_INET6); err == nil {
		unix.Close(fd)
		t.Fatal("got a socket from an init that did not answer in time")
	}
	if el := time.Since(start); el > answerTimeout+time.Second {
		t.Errorf("the request took %v, want about %v", el, answerTimeout)
	}
	fd, err := f.socket(unix.AF_INET) // the late IPv6 answer must not be taken for this one
	if err != nil {
		t.Fatalf("after the late answer: %v", err)
	}
	defer unix.Close(fd)
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sa.(*unix.SockaddrInet4); !ok {
		t.Errorf("asked for an IPv4 socket, got %T: the answers are out of step", sa)
	}
}
