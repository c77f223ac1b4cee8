package netrelay

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Pipe copies bytes both ways between a and b until both directions end,
// then closes both. A side that ends its writing (EOF) is passed on as a
// half-close, so a client that shuts down its write side still gets the
// whole response; an error in either direction ends both at once.
// Relay is built on it off Linux; on Linux, Relay moves the bytes itself
// (relay_linux.go). It is portable, and tested everywhere.
func Pipe(a, b net.Conn) {
	var once sync.Once
	closeBoth := func() { once.Do(func() { a.Close(); b.Close() }) }
	done := make(chan struct{})
	go func() {
		copyHalf(b, a, closeBoth)
		close(done)
	}()
	copyHalf(a, b, closeBoth)
	<-done
	closeBoth()
}

func copyHalf(dst, src net.Conn, abort func()) {
	_, err := io.Copy(dst, src)
	if err != nil && !errors.Is(err, net.ErrClosed) {
		abort()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	abort()
}

// DialFunc opens the far side of one relayed connection.
type DialFunc func(ctx context.Context) (net.Conn, error)

// Serve accepts on l and pipes each connection to a new one from dial
// (Relay's loop off Linux),
// until ctx ends or l is closed; then it closes l and every connection it
// carries, and returns. A connection whose far side cannot be reached
// (nothing listens there yet) is closed at once: the client sees EOF.
func Serve(ctx context.Context, l net.Listener, dial DialFunc) {
	var (
		mu    sync.Mutex
		conns = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	track := func(c net.Conn, add bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if add {
			if ctx.Err() != nil {
				return false
			}
			conns[c] = struct{}{}
		} else {
			delete(conns, c)
		}
		return true
	}
	stop := context.AfterFunc(ctx, func() {
		l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				break
			}
			continue // a failed handshake or a full fd table: go on
		}
		if !track(c, true) {
			c.Close()
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer track(c, false)
			far, err := dial(ctx)
			if err != nil {
				c.Close()
				return
			}
			if !track(far, true) {
				c.Close()
				far.Close()
				return
			}
			defer track(far, false)
			Pipe(c, far)
		}()
	}
	l.Close()
	mu.Lock()
	for c := range conns {
		c.Close()
	}
	mu.Unlock()
	wg.Wait()
}

// acceptEach hands each connection l accepts to handle, in a goroutine of
// its own, until ctx ends (which closes l) or l is closed. A failed accept
// (a full descriptor table) pauses 10 ms rather than spin.
func acceptEach(ctx context.Context, l net.Listener, handle func(net.Conn)) {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		go handle(c)
	}
}
