// Package control is the protocol between a background shell's supervisor
// and the cshell processes that talk to it: a unix socket in the shell's
// folder, one JSON request a connection and one JSON answer. The server
// side (Listen, Server) and the client side (Dial, Conn) live here side
// by side, so that both ends change together.
//
// A client trusts nothing it finds in the state dir: it dials only a
// socket, and only one served by a process of this user in its own PID
// namespace (no process of a container shell is), since a shell may bind
// a socket wherever it can write.
package control

import (
	"errors"
	"syscall"
	"time"
)

// Bounds of a conversation: a client has RequestTimeout to send its
// request, the server ReplyTimeout to write an answer; a request is at
// most MaxRequest bytes, an answer MaxAnswer.
const (
	RequestTimeout = 5 * time.Second
	ReplyTimeout   = 2 * time.Second
	MaxRequest     = 64 << 10
	MaxAnswer      = 1 << 20
)

// Signal is a signal number, as the kill request carries it.
type Signal = syscall.Signal

// request is one request: a kill (Signal set), a probe of ports inside
// the shell (Probe set), a question about the shell (Info), or a new
// owner for it (Adopt).
type request struct {
	Signal syscall.Signal `json:"signal,omitempty"`
	Grace  time.Duration  `json:"grace,omitempty"`
	Probe  []int          `json:"probe,omitempty"`
	Info   bool           `json:"info,omitempty"`
	Adopt  int            `json:"adopt,omitempty"` // the pid of the new owner: the client itself
}

// adoptReply is the answer to an adoption: empty, or why not.
type adoptReply struct {
	Error string `json:"error,omitempty"`
}

// probeReply says which probed ports accept connections, in order.
type probeReply struct {
	Ready []bool `json:"ready"`
}

// Info is what the supervisor itself set up: the session and the host
// addresses it listens on. Others take these from here, never from a
// record, which a shell could have written.
type Info struct {
	Session string `json:"session"`
	Exposed []Port `json:"exposed"`
}

// Port is one exposed port: the host address and the port inside.
type Port struct {
	Listen string `json:"listen"` // host address, e.g. 127.0.0.1:5173
	Port   int    `json:"port"`
}

// ErrNoServer means nothing answers on the socket; ErrNotSupervisor that
// what answers is not a supervisor (nothing was sent to it).
var (
	ErrNoServer      = errors.New("its supervisor does not answer")
	ErrNotSupervisor = errors.New("its control socket is not its supervisor's")
)
