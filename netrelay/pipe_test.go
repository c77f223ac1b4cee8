package netrelay

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoUntilEOF is a server that reads everything, then answers it back
// reversed in order of arrival: it needs the client's half-close.
func startServer(t *testing.T, handle func(net.Conn)) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	t.Cleanup(func() { l.Close() })
	return l
}

// expectEnd checks that the relay closes c: the client sees the end, not
// a hang, and no data.
func expectEnd(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Error("read data where the connection should have ended")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("the client hung instead of seeing the connection end")
	}
}

// echoTransfers sends 8 MiB on each of 8 connections to addr at once,
// each followed by a half-close, and checks that each comes back whole
// (from a readAllThenReply server).
func echoTransfers(t *testing.T, addr string) {
	t.Helper()
	data := make([]byte, 8<<20)
	rand.Read(data)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			go func() {
				c.Write(data)
				c.(*net.TCPConn).CloseWrite() // the server answers only after this
			}()
			got, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("got %d bytes (%v), want the %d sent", len(got), err, len(data))
			}
		}()
	}
	wg.Wait()
}

// openFDs counts this process's open descriptors whose /proc/self/fd link
// starts with prefix ("socket:", or "" for all).
func openFDs(t *testing.T, prefix string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// echoBack sends back what it reads until the client closes.
func echoBack(c net.Conn) {
	io.Copy(c, c)
	c.Close()
}

func readAllThenReply(c net.Conn) {
	defer c.Close()
	b, _ := io.ReadAll(c)
	c.Write(b)
}

func TestServeHalfCloseAndLargeTransfer(t *testing.T) {
	backend := startServer(t, readAllThenReply)
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Serve(ctx, front, func(ctx context.Context) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", backend.Addr().String())
		})
		close(done)
	}()
	echoTransfers(t, front.Addr().String())
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if c, err := net.DialTimeout("tcp", front.Addr().String(), time.Second); err == nil {
		c.Close()
		t.Error("the listener is still open after Serve returned")
	}
}

func TestServeUnreachableClosesClient(t *testing.T) {
	front, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, front, func(context.Context) (net.Conn, error) { return nil, io.ErrUnexpectedEOF })
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectEnd(t, c)
}

func TestServeClosesActiveConnections(t *testing.T) {
	hold := startServer(t, func(c net.Conn) { io.Copy(io.Discard, c); c.Close() })
	front, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	go Serve(ctx, front, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", hold.Addr().String())
	})
	c, err := net.Dial("tcp", front.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("x"))
	time.Sleep(50 * time.Millisecond)
	cancel() // the shell ended: its connections end too
	expectEnd(t, c)
}
