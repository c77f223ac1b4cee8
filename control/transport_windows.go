package control

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	"github.com/cshell/cshell/internal/safefs"
)

// On Windows the control channel is a TCP connection on the loopback,
// guarded by a secret: the supervisor listens on 127.0.0.1 at a port of
// the system's choosing and writes "ADDRESS SECRET" into the socket's
// name in the state dir, which only this user can read; a client sends
// the secret first, and a connection without it is closed unheard.
// (AF_UNIX exists on Windows 10 and later, and named pipes everywhere,
// but neither works in every environment that runs Windows programs:
// wine has no AF_UNIX, and its named pipes lose go-winio's overlapped
// completions. Loopback TCP works in all of them.)

// secretBytes is the secret's length before hex.
const secretBytes = 32

func listenChannel(d *safefs.Dir, name string) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		l.Close()
		return nil, err
	}
	secret := hex.EncodeToString(b)
	f, err := d.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		l.Close()
		return nil, err
	}
	_, err = fmt.Fprintf(f, "%s %s\n", l.Addr(), secret)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		l.Close()
		return nil, err
	}
	return &guarded{Listener: l, secret: secret}, nil
}

// guarded hands out connections whose first line must be the secret.
type guarded struct {
	net.Listener
	secret string
}

func (g *guarded) Accept() (net.Conn, error) {
	c, err := g.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardedConn{Conn: c, secret: g.secret}, nil
}

// guardedConn reads the secret's line before anything else, under the
// deadline its server set for the request: a wrong one fails the read.
type guardedConn struct {
	net.Conn
	secret string
	once   sync.Once
	err    error
}

var errNoSecret = errors.New("the control connection did not give the secret")

func (c *guardedConn) Read(p []byte) (int, error) {
	c.once.Do(func() {
		// Exactly the secret and its newline: a client that sends more
		// without one is read no further.
		line := make([]byte, len(c.secret)+1)
		if _, err := io.ReadFull(c.Conn, line); err != nil {
			c.err = err
			return
		}
		if line[len(line)-1] != '\n' || subtle.ConstantTimeCompare(line[:len(c.secret)], []byte(c.secret)) != 1 {
			c.err = errNoSecret
		}
	})
	if c.err != nil {
		return 0, c.err
	}
	return c.Conn.Read(p)
}

func dialChannel(ctx context.Context, d *safefs.Dir, name string) (net.Conn, error) {
	f, err := d.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, ErrNoServer
	}
	b, err := io.ReadAll(io.LimitReader(f, 512))
	f.Close()
	addr, secret, ok := strings.Cut(strings.TrimSpace(string(b)), " ")
	if err != nil || !ok || len(secret) != 2*secretBytes {
		return nil, ErrNoServer
	}
	if ap, err := net.ResolveTCPAddr("tcp", addr); err != nil || !ap.IP.IsLoopback() {
		return nil, ErrNoServer
	}
	var dialer net.Dialer
	c, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if _, err := io.WriteString(c, secret+"\n"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
