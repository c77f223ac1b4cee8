// Package netrelay carries TCP connections across a shell's network
// namespace without entering it. The shell's init makes sockets inside
// the namespace and hands them out (Factory, over the init's fd 3); a
// socket keeps the namespace it was made in, so this side connects, binds
// and listens with them. Relay takes each connection a listener accepts to
// a Target: on Linux one epoll loop per listener, splicing bytes through
// pipes without copying them into the process (relay_linux.go). Proxy is
// the allowlist proxy a shell reaches inside its namespace (HTTP CONNECT,
// plain HTTP, SOCKS5), deciding by a Dial func it is given; its tunnels
// ride the same splice loop (Splicer). Pipe and Serve copy with goroutines
// where the splice loop is missing: off Linux (on Linux only their tests
// use them). ParseExpose and Bind read and bind --expose values. Rootless
// and root take the same path. Its types are safe for concurrent use.
package netrelay
