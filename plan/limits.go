package plan

import (
	"fmt"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// processRefusals refuses the policy flags a process-group shell cannot
// enforce: it has no namespaces, so it sees and may write all this user
// may, and shares this machine's network.
func processRefusals(r Request) error {
	refuse := func(flag, why string) error {
		return refusedErr("--isolation process cannot enforce %s: %s; drop %s, or use --isolation container", flag, why, flag)
	}
	switch {
	case len(r.FS.Hide) > 0:
		return refuse("--hide", "its shells see every file this user may read")
	case len(r.FS.RO) > 0:
		return refuse("--ro", "its shells may write every file this user may write")
	case len(r.AllowHosts) > 0:
		return refuse("--allow-host", "its shells share this machine's network, with no proxy and nothing refused")
	case r.Limits.Memory > 0:
		return refuse("--memory", "it has no cgroup and no namespace to bound")
	case r.Limits.Pids > 0:
		return refuse("--pids", "it has no cgroup and no namespace to bound")
	case r.Limits.CPUs > 0:
		return refuse("--cpus", "it has no cgroup to bound")
	}
	return nil
}

// effectiveLimits are the flags' limits and the configuration's, the
// tighter of each; a flag above the configuration is lowered to it, with
// a warning. --cpus needs a cgroup: refused where cshell makes none.
func (p *Plan) effectiveLimits(asked policy.Limits, cfg *policy.Config, f Facts) (policy.Limits, error) {
	conf := cfg.Limits()
	l := asked.Lower(conf)
	for _, w := range []struct {
		flag      string
		asked, to float64
		show      func(float64) string
	}{
		{"--memory", float64(asked.Memory), float64(conf.Memory), func(v float64) string { return policy.FormatSize(int64(v)) }},
		{"--pids", float64(asked.Pids), float64(conf.Pids), func(v float64) string { return fmt.Sprint(int(v)) }},
		{"--cpus", asked.CPUs, conf.CPUs, func(v float64) string { return fmt.Sprint(v) }},
	} {
		if w.asked > 0 && w.to > 0 && w.asked > w.to {
			p.warn("%s %s is above the configuration's limit (limits): %s applies", w.flag, w.show(w.asked), w.show(w.to))
		}
	}
	if l.Empty() {
		return l, nil
	}
	if l.CPUs > 0 {
		if err := policy.CheckCPUs(l.CPUs, float64(f.NumCPU)); err != nil {
			return l, usageErr("%w", err)
		}
	}
	l.EnforcedBy = f.Enforcement
	if l.CPUs > 0 && l.EnforcedBy != container.ByCgroup {
		return l, refusedErr("--cpus %v cannot be held here: it needs a cgroup, and cshell makes one only as root or through your systemd manager's delegated cgroups, which this machine lacks (this user's shells are bounded by cshell's watchdog, which can hold --memory and --pids but not CPU time); run as root, or drop --cpus", l.CPUs)
	}
	if l.CPUs > 0 && f.NoCPUController {
		return l, refusedErr("--cpus %v cannot be held here: your systemd manager delegates no cpu controller to you (only memory and pids); add it (Delegate=cpu in user@.service, as systemd 252 and later do by default), or drop --cpus", l.CPUs)
	}
	return l, nil
}
