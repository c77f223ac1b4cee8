package plan

import (
	"io"
	"net"

	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/sandbox"
)

// Wiring is what a started shell is connected to, which a plan cannot
// carry: its streams, its bound listeners, and the callbacks that record
// and tell what happens.
type Wiring struct {
	ID             string // the container's: sandbox.NewID
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Terminal       bool
	// Listeners are bound for the plan's Exposes, in order (none when
	// the shell is not Namespaced: its servers bind this machine's ports).
	Listeners []net.Listener
	Reach     []sandbox.Reach // the session's exposed ports, for a foreground shell
	Probes    bool            // a way into the shell's network for readiness probes
	Held      bool            // made before its command (a warm sandbox: sandbox.Options.Held)
	// Refused hears of what the syscall filter refused and of OOM kills;
	// Record of each request the proxy refused; Asking of each request
	// that starts to wait for a grant.
	Refused func(policy.Violation)
	Record  func(policy.Violation)
	Asking  func(host string, port int)
	// Grants are the session's grants, asked at each decision when the
	// plan says they reach the shell (Network.Grants).
	Grants func() []policy.Grant
	// Revoked reports whether the session took a credential back: asked
	// whatever Network.Grants says (a project that turns grants off must
	// not undo a revocation).
	Revoked func(name string) bool
}

// Options are the sandbox's options for the plan, connected as w says:
// the one place they are made.
func (p *Plan) Options(w Wiring) sandbox.Options {
	o := sandbox.Options{
		ID: w.ID, Command: p.Command, Argv: p.Argv, Env: p.Env, FS: p.FS,
		Stdin: w.Stdin, Stdout: w.Stdout, Stderr: w.Stderr, Terminal: w.Terminal,
		MaxConnections: p.MaxConnections, Reach: w.Reach, Probes: w.Probes,
		Limits: p.Limits, AllowUserNamespaces: p.AllowUserNamespaces, QuietWrites: p.QuietWrites, Refused: w.Refused,
		Held: w.Held,
	}
	for i, l := range w.Listeners {
		if i < len(p.Exposes) {
			o.Exposes = append(o.Exposes, sandbox.Expose{Listener: l, Port: int(p.Exposes[i].Port)})
		}
	}
	if n := p.Network; n.ProxyPort != 0 {
		rules := n.Rules()
		if n.Grants && w.Grants != nil {
			rules = rules.WithGrants(w.Grants, n.Ask)
		}
		o.Proxy = &sandbox.Proxy{Port: n.ProxyPort, Rules: rules, Record: w.Record, Asking: w.Asking, Hosts: n.Hosts}
		for _, c := range n.Credentials {
			o.Proxy.Credentials = append(o.Proxy.Credentials, sandbox.Credential{Name: c.Name, Host: c.Host, Ports: c.Ports, Header: c.Header, Plain: c.Plain, Value: c.Value})
		}
		o.Proxy.Revoked = w.Revoked
	}
	return o
}
