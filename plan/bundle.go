package plan

import (
	"path/filepath"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// bundle checks what an OCI bundle can hold and where it goes. Exposed
// ports, allowed hosts and the proxy need cshell's supervisor, which a
// bundle does not have: asking for them is a usage error, and the
// configuration's network.allow does not apply (a bundle's shell reaches
// loopback only), which a warning says.
func (p *Plan) bundle(r Request, cfg *policy.Config) error {
	switch {
	case len(r.Expose) > 0 || len(r.AllowHosts) > 0 || len(r.AddHosts) > 0:
		return usageErr("--expose, --allow-host and --add-host need cshell's supervisor, which an OCI bundle has not; run the command with cshell run for them")
	}
	abs, err := filepath.Abs(r.BundleDir)
	if err != nil {
		return usageErr("--bundle %q: %w", r.BundleDir, err)
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(real, filepath.Base(abs))
	}
	if w := p.FS.Writable(abs); w != "" {
		return usageErr("--bundle %s lies in %s, which the shell may write: it could change the bundle's config.json for its next start; write the bundle elsewhere", abs, w)
	}
	if len(cfg.Network.Allow) > 0 {
		p.warn("the configuration's network.allow does not apply to a bundle: its shell reaches loopback only (the proxy needs cshell's supervisor)")
	}
	p.BundleDir = abs
	p.Network = Network{}
	return nil
}

// Spec is the container a bundle describes.
func (p *Plan) Spec() *container.Spec {
	return &container.Spec{Command: p.Command, Argv: p.Argv, Env: p.Env, FS: p.FS, Limits: p.Limits, AllowUserNamespaces: p.AllowUserNamespaces}
}
