// Package netrelay carries TCP connections across a shell's network
// namespace without entering it: the shell's init makes sockets inside the
// namespace and hands them out (Factory); a socket keeps the namespace it
// was made in, so this side connects, binds and listens with them, and
// copies bytes between them and host sockets (Serve, Pipe). Rootless and
// root use the same path. Its types are safe for concurrent use.
package netrelay
