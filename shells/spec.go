package shells

import (
	"fmt"
	"path/filepath"

	"github.com/cshell/cshell/container"
)

// WriteBundle writes an OCI bundle (container.WriteBundle) for the
// command and policy of o into dir, for runc run, crun run or an engine
// that takes bundles. Exposed ports, allowed hosts and the proxy need
// cshell's supervisor, which a bundle does not have: asking for them is a
// usage error, and the configuration's network.allow does not apply (a
// bundle's shell reaches loopback only), which Stderr hears of.
func WriteBundle(o RunOptions, dir string) error {
	switch {
	case o.Isolation == container.Process:
		return usageErr("--isolation process has no container to describe; leave --isolation out")
	case len(o.Expose) > 0 || len(o.AllowHosts) > 0 || len(o.AddHosts) > 0:
		return usageErr("--expose, --allow-host and --add-host need cshell's supervisor, which an OCI bundle has not; run the command with cshell run for them")
	}
	o.Isolation = container.Container
	p, err := prepare(o, "cshell spec --bundle DIR -- COMMAND", nil)
	if err != nil {
		return err
	}
	p.done() // the bundle binds the caches' folders; nothing holds them in use
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usageErr("--bundle %q: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(real, filepath.Base(abs))
	}
	if w := p.fsys.Writable(abs); w != "" {
		return usageErr("--bundle %s lies in %s, which the shell may write: it could change the bundle's config.json for its next start; write the bundle elsewhere", abs, w)
	}
	if o.Stderr != nil && len(p.cfg.Network.Allow) > 0 {
		fmt.Fprintln(o.Stderr, "cshell: warning: the configuration's network.allow does not apply to a bundle: its shell reaches loopback only (the proxy needs cshell's supervisor)")
	}
	s := &container.Spec{Command: p.command, Argv: p.argv, Env: p.env, FS: p.fsys, Limits: p.limits, AllowUserNamespaces: p.userns}
	if err := container.WriteBundle(abs, s); err != nil {
		return fmt.Errorf("write the bundle to %s: %w; give --bundle a new or empty directory you may write", abs, err)
	}
	return nil
}
