package plan

import (
	"testing"
	"time"

	"github.com/cshell/cshell/policy"
)

// TestSandboxKey: plans that differ only in what a held sandbox takes at
// its start (the command, its start directory) or its caller applies (the
// timeout, the grace) share a key; a change of anything the sandbox is
// made of does not; the key does not depend on a map's order.
func TestSandboxKey(t *testing.T) {
	r, f := base(t)
	r.AllowHosts = []string{"example.com"}
	r.AddHosts = []string{"a.test:198.18.0.2", "b.test:198.18.0.3", "c.test:198.18.0.4", "d.test:198.18.0.5"}
	key := mustPlan(t, r, f).SandboxKey()
	if key == "" {
		t.Fatal("no key")
	}
	for i := 0; i < 20; i++ { // a map's order changes from run to run
		if k := mustPlan(t, r, f).SandboxKey(); k != key {
			t.Fatal("one request gave two keys")
		}
	}
	alike := r
	alike.Command = []string{"python3", "-c", "print(1)"}
	alike.Timeout, alike.Grace = time.Minute, 3*time.Second
	alike.FS.Start = r.FS.Cwd
	if mustPlan(t, alike, f).SandboxKey() != key {
		t.Error("another command, start directory, timeout or grace changed the key")
	}
	for name, change := range map[string]func(*Request, *Facts){
		"env":        func(r *Request, _ *Facts) { r.Env = []string{"X=1"} },
		"host":       func(r *Request, _ *Facts) { r.AllowHosts = []string{"example.org"} },
		"added host": func(r *Request, _ *Facts) { r.AddHosts = r.AddHosts[1:] },
		"memory":     func(r *Request, _ *Facts) { r.Limits = policy.Limits{Memory: 64 << 20} },
		"userns":     func(r *Request, _ *Facts) { r.AllowUserNamespaces = true },
		"reserved":   func(_ *Request, f *Facts) { f.Reserved = []int{sandboxProxyPort(t)} },
		"ask":        func(r *Request, _ *Facts) { r.Ask = time.Minute },
	} {
		r2, f2 := r, f
		change(&r2, &f2)
		if mustPlan(t, r2, f2).SandboxKey() == key {
			t.Errorf("a change of %s kept the key", name)
		}
	}
}
