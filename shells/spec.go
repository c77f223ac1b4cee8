package shells

import (
	"fmt"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
)

// WriteBundle writes an OCI bundle (container.WriteBundle) for the
// command and policy of o into dir, for runc run, crun run or an engine
// that takes bundles. What needs cshell's supervisor (exposed ports,
// allowed hosts, the proxy) is refused by the plan; its warnings go to
// o.Stderr.
func WriteBundle(o RunOptions, dir string) error {
	o.Purpose, o.BundleDir = plan.Bundle, dir
	p, err := plan.New(o.Request, hostFacts(o.FS.Home, nil))
	if err != nil {
		return err
	}
	p.Release() // the bundle binds the caches' folders; nothing holds them in use
	warn(o.Stderr, p.Warnings)
	if err := container.WriteBundle(p.BundleDir, p.Spec()); err != nil {
		return fmt.Errorf("write the bundle to %s: %w; give --bundle a new or empty directory you may write", p.BundleDir, err)
	}
	return nil
}
