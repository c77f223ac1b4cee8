package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/cshell/cshell/internal/safefs"
)

// dialTimeout bounds the connection to a supervisor.
const dialTimeout = 2 * time.Second

// Conn is a connection to a supervisor, for one request.
type Conn struct {
	c   net.Conn
	pid int // the supervisor's, as the kernel tells it (0 off Linux)
}

// Dial connects to the control socket name in d. Only a socket is dialled,
// and its server must be a supervisor: a process of this user in our PID
// namespace (see supervisorPeer). Errors wrap ErrNoServer or
// ErrNotSupervisor.
func Dial(ctx context.Context, d *safefs.Dir, name string) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := dialChannel(ctx, d, name)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", ErrNoServer, err)
	}
	pid, err := supervisorPeer(c)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%w (%w); nothing was sent to it", ErrNotSupervisor, err)
	}
	return &Conn{c: c, pid: pid}, nil
}

// Pid is the supervisor's process id (0 where the kernel does not tell).
func (c *Conn) Pid() int { return c.pid }

// Close hangs up.
func (c *Conn) Close() error { return c.c.Close() }

// ask sends req and reads one JSON answer into v, within wait or until
// ctx ends (the connection is then cut).
func (c *Conn) ask(ctx context.Context, req request, wait time.Duration, v any) error {
	stop := context.AfterFunc(ctx, func() { _ = c.c.SetDeadline(time.Now()) })
	defer stop()
	_ = c.c.SetWriteDeadline(time.Now().Add(ReplyTimeout))
	if err := json.NewEncoder(c.c).Encode(req); err != nil {
		return orCtx(ctx, err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(io.LimitReader(c.c, MaxAnswer)).ReadBytes('\n')
	if err != nil {
		return orCtx(ctx, err)
	}
	return json.Unmarshal(line, v)
}

// orCtx is ctx's error when ctx ended, else err.
func orCtx(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Kill asks the supervisor to send sig to the shell and to KILL what is
// left after grace; the answer (the shell's final record, decoded into
// v) comes once the shell is gone. It waits up to the grace and wait
// more, or until ctx ends.
func (c *Conn) Kill(ctx context.Context, sig Signal, grace, wait time.Duration, v any) error {
	return c.ask(ctx, request{Signal: sig, Grace: grace}, grace+wait, v)
}

// Probe asks whether each port accepts connections inside the shell.
func (c *Conn) Probe(ctx context.Context, ports []int) ([]bool, error) {
	var r probeReply
	if err := c.ask(ctx, request{Probe: ports}, RequestTimeout, &r); err != nil {
		return nil, err
	}
	if len(r.Ready) != len(ports) {
		return nil, fmt.Errorf("the supervisor answered %d ports of %d", len(r.Ready), len(ports))
	}
	return r.Ready, nil
}

// Info asks what the supervisor set up.
func (c *Conn) Info(ctx context.Context) (Info, error) {
	var r Info
	err := c.ask(ctx, request{Info: true}, ReplyTimeout, &r)
	return r, err
}

// Adopt makes this process the shell's owner: the shell ends when it
// ends (or, with a reattach window, waits that long for another owner).
// The supervisor checks that the asking process is this one.
func (c *Conn) Adopt(ctx context.Context) error {
	var r adoptReply
	if err := c.ask(ctx, request{Adopt: os.Getpid()}, RequestTimeout, &r); err != nil {
		return err
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	return nil
}
