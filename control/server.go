package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/cshell/cshell/internal/safefs"
)

// Listener is a control socket; Close removes its name.
type Listener struct {
	net.Listener
	dir  *safefs.Dir
	name string
}

// Listen listens on the control socket name in d (anything there is
// removed first, never followed). d must stay open while it listens.
func Listen(d *safefs.Dir, name string) (*Listener, error) {
	_ = d.Remove(name)
	l, err := listenChannel(d, name)
	if err != nil {
		return nil, err
	}
	return &Listener{Listener: l, dir: d, name: name}, nil
}

// Close stops listening and removes the socket's name.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	_ = l.dir.Remove(l.name)
	return err
}

// Server answers requests. Kills go to the owner's loop on Kills, which
// answers each once the shell ended; probes and questions are answered
// here, from Probe and Info.
type Server struct {
	Kills chan<- *Kill
	Probe func(ctx context.Context, port int) bool
	Info  func() Info
	// Adopt makes pid the shell's owner, whose end ends it (nil: no shell
	// here takes a new owner). The client must be that process.
	Adopt   func(pid int) error
	Touched func() // before each request is served (nil: nothing)
}

// Kill is a kill asked for; its client waits for the answer.
type Kill struct {
	Signal syscall.Signal
	Grace  time.Duration
	c      net.Conn
}

// HungUp reports whether the client has gone, so that nobody waits for
// this kill any more. (A deadline already past would fail the read
// before it looks: the client gets a millisecond to be seen gone.)
func (k *Kill) HungUp() bool {
	_ = k.c.SetReadDeadline(time.Now().Add(time.Millisecond))
	var b [1]byte
	_, err := k.c.Read(b[:])
	_ = k.c.SetReadDeadline(time.Time{})
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// Answer writes v, a JSON line, to the client and hangs up.
func (k *Kill) Answer(v any) {
	defer k.c.Close()
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	_ = k.c.SetWriteDeadline(time.Now().Add(ReplyTimeout))
	_, _ = k.c.Write(append(b, '\n'))
}

// Drop hangs up without an answer.
func (k *Kill) Drop() { k.c.Close() }

// probeTimeout bounds the probes of one request.
const probeTimeout = 2 * time.Second

// Serve accepts connections until l closes or done is closed, each served
// in a goroutine of its own under deadlines: no client (one that sends
// nothing, say) can hold up another, a kill, or the end.
func (s *Server) Serve(l net.Listener, done <-chan struct{}) {
	// A descriptor in reserve: out of descriptors, it makes room for one
	// control connection (a kill), whatever else holds the rest.
	reserve, _ := os.Open(os.DevNull)
	defer func() {
		if reserve != nil {
			reserve.Close()
		}
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if reserve != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
				reserve.Close()
				reserve = nil
				continue
			}
			// Out of descriptors or another passing error: wait a moment
			// rather than spin; the listener keeps its queue.
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if reserve == nil {
			reserve, _ = os.Open(os.DevNull)
		}
		go s.serve(c, done)
	}
}

func (s *Server) serve(c net.Conn, done <-chan struct{}) {
	_ = c.SetReadDeadline(time.Now().Add(RequestTimeout))
	var req request
	if err := json.NewDecoder(io.LimitReader(c, MaxRequest)).Decode(&req); err != nil {
		c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if s.Touched != nil {
		s.Touched()
	}
	switch {
	case req.Signal > 0 && s.Kills != nil:
		select {
		case s.Kills <- &Kill{Signal: req.Signal, Grace: req.Grace, c: c}:
		case <-done:
			c.Close()
		}
	case len(req.Probe) > 0 && s.Probe != nil:
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		r := probeReply{Ready: make([]bool, len(req.Probe))}
		for i, p := range req.Probe {
			r.Ready[i] = s.Probe(ctx, p)
		}
		cancel()
		reply(c, r)
	case req.Adopt > 0 && s.Adopt != nil:
		var r adoptReply
		if pid, err := clientPeer(c); err != nil {
			r.Error = err.Error()
		} else if pid != 0 && pid != req.Adopt {
			r.Error = fmt.Sprintf("process %d asked for process %d to own the shell; a process may only take a shell over for itself", pid, req.Adopt)
		} else if err := s.Adopt(req.Adopt); err != nil {
			r.Error = err.Error()
		}
		reply(c, r)
	case req.Info && s.Info != nil:
		info := s.Info()
		if info.Exposed == nil {
			info.Exposed = []Port{}
		}
		reply(c, info)
	default:
		c.Close()
	}
}

// reply writes v to the client and hangs up.
func reply(c net.Conn, v any) {
	defer c.Close()
	_ = c.SetWriteDeadline(time.Now().Add(ReplyTimeout))
	_ = json.NewEncoder(c).Encode(v)
}
