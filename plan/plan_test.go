package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// base is a request and facts that plan on any machine: a home and a
// working directory of the test's own.
func base(t testing.TB) (Request, Facts) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	work := filepath.Join(home, "project")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	r := Request{Command: []string{"echo hi"}, Isolation: container.Container, FS: policy.FilesystemRequest{Home: home, Cwd: work, System: []string{}}}
	f := Facts{
		Environ:         []string{"PATH=/usr/bin:/bin", "HOME=" + home, "SECRET_TOKEN=x", "LANG=C.UTF-8"},
		NumCPU:          4,
		Enforcement:     container.ByCgroup,
		Namespaced:      true,
		DefaultStateDir: filepath.Join(home, ".local/state/cshell"),
		Alive:           func(pid int) bool { return pid == 4242 },
	}
	return r, f
}

func mustPlan(t *testing.T, r Request, f Facts) *Plan {
	t.Helper()
	p, err := New(r, f)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(p.Release)
	return p
}

func TestPlanDefaults(t *testing.T) {
	r, f := base(t)
	p := mustPlan(t, r, f)
	switch {
	case p.Purpose != Foreground || p.Command != "echo hi" || p.Argv != nil:
		t.Errorf("command: %q %q %q", p.Purpose, p.Command, p.Argv)
	case !p.Namespaced || p.Session != "default" || p.Grace != DefaultGrace || p.Timeout != 0:
		t.Errorf("defaults: namespaced %v, session %q, grace %v, timeout %v", p.Namespaced, p.Session, p.Grace, p.Timeout)
	case p.FS.Workdir != r.FS.Cwd:
		t.Errorf("workdir %q, want %q", p.FS.Workdir, r.FS.Cwd)
	case p.Network.ProxyPort != 0 || len(p.Network.Allow) != 0 || p.Ready != nil || len(p.Warnings) != 0:
		t.Errorf("a plain shell got more: %+v, warnings %q", p.Network, p.Warnings)
	}
	if policy.EnvValue(p.Env, "TMPDIR") != "/tmp" || policy.EnvValue(p.Env, "HOME") != r.FS.Home || policy.EnvValue(p.Env, "PATH") == "" {
		t.Errorf("env %q", p.Env)
	}
	if slices.ContainsFunc(p.Env, func(e string) bool {
		return strings.HasPrefix(e, "SECRET_TOKEN=") || strings.HasPrefix(e, "HTTP_PROXY=")
	}) {
		t.Errorf("env passes what it should not: %q", p.Env)
	}
}

func TestPlanCommandWords(t *testing.T) {
	r, f := base(t)
	r.Command = []string{"python3", "-c", "print('hi')"}
	p := mustPlan(t, r, f)
	if p.Command != `python3 -c 'print('\''hi'\'')'` || !slices.Equal(p.Argv, r.Command) {
		t.Errorf("command %q, argv %q", p.Command, p.Argv)
	}
}

func TestPlanRefusals(t *testing.T) {
	off := false
	for name, c := range map[string]struct {
		change func(*Request, *Facts)
		kind   error
		says   string
	}{
		"shells off":              {func(r *Request, _ *Facts) { r.Config = &policy.Config{Shells: policy.ShellsConfig{Enabled: &off}} }, ErrRefused, "shells.enabled=false"},
		"no command":              {func(r *Request, _ *Facts) { r.Command = nil }, ErrUsage, "cshell run -- COMMAND"},
		"no command, -d":          {func(r *Request, _ *Facts) { r.Command, r.Purpose = []string{" "}, Background }, ErrUsage, "cshell run -d -- COMMAND"},
		"bad session":             {func(r *Request, _ *Facts) { r.Session = "a/b" }, ErrUsage, "session"},
		"session from env":        {func(_ *Request, f *Facts) { f.Environ = append(f.Environ, "CSHELL_SESSION=..") }, ErrUsage, "session"},
		"bad name":                {func(r *Request, _ *Facts) { r.Purpose, r.Name = Background, "42" }, ErrUsage, "--name"},
		"task-like name":          {func(r *Request, _ *Facts) { r.Purpose, r.Name = Background, "shell-3" }, ErrUsage, "shell-N"},
		"owner gone":              {func(r *Request, _ *Facts) { r.Purpose, r.OwnerPid = Background, 99 }, ErrUsage, "--owner-pid 99"},
		"owner negative":          {func(r *Request, _ *Facts) { r.Purpose, r.OwnerPid = Background, -1 }, ErrUsage, "--owner-pid"},
		"hide, process":           {func(r *Request, _ *Facts) { r.Isolation, r.FS.Hide = container.Process, []string{"x"} }, ErrRefused, "--hide"},
		"ro, process":             {func(r *Request, _ *Facts) { r.Isolation, r.FS.RO = container.Process, []string{"x"} }, ErrRefused, "--ro"},
		"allow, process":          {func(r *Request, _ *Facts) { r.Isolation, r.AllowHosts = container.Process, []string{"x.org"} }, ErrRefused, "--allow-host"},
		"memory, process":         {func(r *Request, _ *Facts) { r.Isolation, r.Limits.Memory = container.Process, 64<<20 }, ErrRefused, "--memory"},
		"pids, auto":              {func(r *Request, f *Facts) { r.Isolation, r.Limits.Pids, f.Namespaced = container.Auto, 9, false }, ErrRefused, "--pids"},
		"cpus, process":           {func(r *Request, _ *Facts) { r.Isolation, r.Limits.CPUs = container.Process, 1 }, ErrRefused, "--cpus"},
		"cpus, watchdog":          {func(r *Request, f *Facts) { r.Limits.CPUs, f.Enforcement = 1, container.ByWatchdog }, ErrRefused, "needs a cgroup"},
		"cpus, no cpu controller": {func(r *Request, f *Facts) { r.Limits.CPUs, f.NoCPUController = 1, true }, ErrRefused, "delegates no cpu controller"},
		"cpus, too many":          {func(r *Request, _ *Facts) { r.Limits.CPUs = 64 }, ErrUsage, ""},
		"bad expose":              {func(r *Request, _ *Facts) { r.Expose = []string{"http"} }, ErrUsage, "--expose"},
		"public expose":           {func(r *Request, _ *Facts) { r.Expose = []string{"0.0.0.0:8080"} }, ErrRefused, "--expose-public"},
		"bad allow-host":          {func(r *Request, _ *Facts) { r.AllowHosts = []string{"a b"} }, ErrUsage, "--allow-host"},
		"bad add-host":            {func(r *Request, _ *Facts) { r.AddHosts = []string{"api.test"} }, ErrUsage, "--add-host"},
		"add-host address":        {func(r *Request, _ *Facts) { r.AddHosts = []string{"1.2.3.4:5.6.7.8"} }, ErrUsage, "NAME:ADDRESS"},
		"bad env key":             {func(r *Request, _ *Facts) { r.Env = []string{"A B=1"} }, ErrUsage, "--env"},
		"env NUL":                 {func(r *Request, _ *Facts) { r.Env = []string{"A=x\x00y"} }, ErrUsage, "NUL"},
		"missing -w":              {func(r *Request, _ *Facts) { r.FS.Workdir = "/nonexistent/cshell-test" }, ErrUsage, ""},
		"ready, fg":               {func(r *Request, _ *Facts) { r.Ready.Log = "up" }, ErrUsage, "background"},
		"ready, no port":          {func(r *Request, _ *Facts) { r.Purpose, r.Ready.Ports = Background, true }, ErrUsage, "--ready waits for exposed ports"},
		"ready, bad log":          {func(r *Request, _ *Facts) { r.Purpose, r.Ready.Log = Background, "(x" }, ErrUsage, "--ready-log \"(x\" is not a valid regular expression (RE2)"},
		"state dir":               {func(_ *Request, f *Facts) { f.StateDir = func(string) error { return errStateDir } }, errStateDir, ""},
		"bundle, process":         {func(r *Request, _ *Facts) { r.Purpose, r.Isolation = Bundle, container.Process }, ErrUsage, "--isolation process"},
		"bundle, expose":          {func(r *Request, _ *Facts) { r.Purpose, r.Expose = Bundle, []string{"80"} }, ErrUsage, "supervisor"},
		"bundle in work":          {func(r *Request, _ *Facts) { r.Purpose, r.BundleDir = Bundle, filepath.Join(r.FS.Cwd, "b") }, ErrUsage, "may write"},
	} {
		t.Run(name, func(t *testing.T) {
			r, f := base(t)
			c.change(&r, &f)
			p, err := New(r, f)
			if err == nil {
				p.Release()
				t.Fatalf("planned: %+v", p)
			}
			if !errors.Is(err, c.kind) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q (kind %v); want one line of kind %v that says %q", err, errors.Is(err, c.kind), c.kind, c.says)
			}
		})
	}
}

var errStateDir = errors.New("the state dir is not cshell's")

func TestPlanWordsOfAnMCPServer(t *testing.T) {
	mcp := &Words{Expose: "expose", Name: "name", ReadyLog: "ready_log"}
	for _, change := range []func(*Request){
		func(r *Request) { r.Expose = []string{"0.0.0.0:80"} },
		func(r *Request) { r.Expose = []string{"x"} },
		func(r *Request) { r.Ready.Ports = true },
		func(r *Request) { r.Ready.Log = "(" },
		func(r *Request) { r.Name = "all" },
	} {
		r, f := base(t)
		r.Purpose, r.Words = Background, mcp
		change(&r)
		if _, err := New(r, f); err == nil || strings.Contains(err.Error(), "--") {
			t.Errorf("%v: want a sentence in the tool's words", err)
		}
	}
}

func TestPlanNetwork(t *testing.T) {
	r, f := base(t)
	r.AllowHosts = []string{"Example.COM", "*.npmjs.org:443"}
	r.AddHosts = []string{"api.test:198.18.0.2", "v6.test:[fd00::2]"}
	r.Expose = []string{"5173", "127.0.0.1:5173", "[::1]:8080"}
	r.Config = &policy.Config{Network: policy.NetworkConfig{Allow: []string{"proxy.golang.org"}, Deny: []string{"evil.example.com"}}}
	f.Reserved = []int{sandboxProxyPort(t)}
	p := mustPlan(t, r, f)
	if got := p.AllowHosts(); !slices.Equal(got, []string{"example.com", "*.npmjs.org:443", "proxy.golang.org"}) {
		t.Errorf("allow %q", got)
	}
	if len(p.Network.Deny) != 1 || p.Network.Hosts["api.test"] != netip.MustParseAddr("198.18.0.2") || p.Network.Hosts["v6.test"] != netip.MustParseAddr("fd00::2") {
		t.Errorf("network %+v", p.Network)
	}
	if len(p.Exposes) != 2 || p.Exposes[0].Port != 5173 || p.Exposes[1].Listen.String() != "[::1]:8080" {
		t.Errorf("exposes %+v (one address once)", p.Exposes)
	}
	port := p.Network.ProxyPort
	if port == 0 || slices.Contains(f.Reserved, port) || port == 5173 || port == 8080 {
		t.Errorf("proxy port %d (reserved %v)", port, f.Reserved)
	}
	if want := "http://127.0.0.1:" + strconv.Itoa(port); policy.EnvValue(p.Env, "HTTPS_PROXY") != want {
		t.Errorf("HTTPS_PROXY %q, want %q", policy.EnvValue(p.Env, "HTTPS_PROXY"), want)
	}
	rules := p.Network.Rules()
	if ok, _ := rules.Decide("example.com", 443); !ok {
		t.Error("an allowed host is refused")
	}
	if ok, _ := rules.Decide("evil.example.com", 443); ok {
		t.Error("a denied host is allowed")
	}
}

// sandboxProxyPort is the proxy's first choice, to reserve it.
func sandboxProxyPort(t *testing.T) int {
	r, f := base(t)
	r.AllowHosts = []string{"example.com"}
	return mustPlan(t, r, f).Network.ProxyPort
}

func TestPlanEnvironment(t *testing.T) {
	r, f := base(t)
	f.Environ = append(f.Environ, "CI_TOKEN=abc", "SSH_AUTH_SOCK=/run/agent.sock")
	r.Env = []string{"CI_TOKEN", "UNSET_HERE", "MODE=dev", "TMPDIR=/work/tmp"}
	p := mustPlan(t, r, f)
	if policy.EnvValue(p.Env, "CI_TOKEN") != "abc" || policy.EnvValue(p.Env, "MODE") != "dev" || policy.EnvValue(p.Env, "TMPDIR") != "/work/tmp" {
		t.Errorf("env %q", p.Env)
	}
	if slices.ContainsFunc(p.Env, func(e string) bool {
		return strings.HasPrefix(e, "UNSET_HERE") || strings.HasPrefix(e, "SSH_AUTH_SOCK")
	}) {
		t.Errorf("env %q passes an unset variable or the agent", p.Env)
	}
}

func TestPlanLimits(t *testing.T) {
	r, f := base(t)
	r.Limits = policy.Limits{Memory: 1 << 30, Pids: 50}
	mem := policy.Size(256 << 20)
	r.Config = &policy.Config{LimitsCfg: policy.LimitsConfig{Memory: &mem}}
	p := mustPlan(t, r, f)
	if p.Limits.Memory != 256<<20 || p.Limits.Pids != 50 || p.Limits.EnforcedBy != container.ByCgroup {
		t.Errorf("limits %+v", p.Limits)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "--memory 1 GiB is above the configuration's limit") {
		t.Errorf("warnings %q", p.Warnings)
	}
	r.Isolation = container.Process
	r.Limits = policy.Limits{}
	if p := mustPlan(t, r, f); !p.Limits.Empty() || p.Namespaced || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "do not apply") {
		t.Errorf("process: limits %+v, warnings %q", p.Limits, p.Warnings)
	}
}

func TestPlanBackground(t *testing.T) {
	r, f := base(t)
	r.Purpose, r.Name, r.OwnerPid, r.Description = Background, "web", 4242, "dev server"
	r.Expose = []string{"5173"}
	r.Ready = ReadyRequest{Ports: true, Log: "ready in"}
	p := mustPlan(t, r, f)
	if p.Name != "web" || p.OwnerPid != 4242 || p.Description != "dev server" {
		t.Errorf("background fields %+v", p)
	}
	if p.Ready == nil || !slices.Equal(p.Ready.Ports, []int{5173}) || p.Ready.Log != "ready in" || p.Ready.Timeout != DefaultReadyTimeout {
		t.Errorf("ready %+v", p.Ready)
	}
	if p.MaxLogBytes <= 0 || p.Notify == "" || p.MaxConcurrent <= 0 {
		t.Errorf("kept by the configuration's defaults: %d %q %d", p.MaxLogBytes, p.Notify, p.MaxConcurrent)
	}
	if err := p.CheckRunning(p.MaxConcurrent - 1); err != nil {
		t.Error(err)
	}
	err := p.CheckRunning(p.MaxConcurrent)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "by default") || !strings.Contains(err.Error(), "the global configuration file") {
		t.Errorf("at the limit: %v", err)
	}
	two := 2
	r.Config, r.ConfigFile = &policy.Config{Shells: policy.ShellsConfig{MaxConcurrent: &two}}, "/etc/cshell.json"
	err = mustPlan(t, r, f).CheckRunning(2)
	if err == nil || !strings.Contains(err.Error(), "set by the configuration") || !strings.Contains(err.Error(), "/etc/cshell.json") {
		t.Errorf("at a configured limit: %v", err)
	}
}

func TestPlanKeepsCshellsOwnOutOfReach(t *testing.T) {
	r, f := base(t)
	var made, dirs []string
	f.StateDir = func(d string) error { made = append(made, d); return os.MkdirAll(d, 0o700) }
	f.MakeDir = func(d string) error { dirs = append(dirs, d); return os.MkdirAll(d, 0o700) }
	r.StateDir = filepath.Join(r.FS.Home, "state")
	r.ConfigFile = filepath.Join(r.FS.Home, ".config/cshell/config.json")
	p := mustPlan(t, r, f)
	if !slices.Equal(made, []string{r.StateDir, f.DefaultStateDir}) {
		t.Errorf("state dirs made: %q", made)
	}
	if !slices.Equal(dirs, []string{filepath.Dir(r.ConfigFile)}) {
		t.Errorf("folders made: %q", dirs)
	}
	for _, d := range made {
		if !slices.Contains(p.FS.Hide, d) {
			t.Errorf("%s is not hidden: %q", d, p.FS.Hide)
		}
	}
	// A process-group shell has nothing to hide them with.
	made = nil
	r.Isolation = container.Process
	mustPlan(t, r, f)
	if len(made) != 0 {
		t.Errorf("a process shell made state dirs: %q", made)
	}
}

func TestPlanCaches(t *testing.T) {
	r, f := base(t)
	var store *cache.Store
	f.OpenCaches = func(home string) (*cache.Store, error) {
		var err error
		// Outside the home: ~/.cache is a cache itself, and what lies
		// beneath it is not seen anyway.
		store, err = cache.Open(filepath.Join(filepath.Dir(home), "store"))
		return store, err
	}
	// Foreground and background shells alike keep the caches within the
	// cap when they end, so both carry the store's root and cap.
	for _, purpose := range []Purpose{Foreground, Background} {
		r.Purpose = purpose
		p := mustPlan(t, r, f)
		if p.Caches == nil || p.Caches.Root == "" || p.CacheLock() == nil {
			t.Fatalf("%s: caches %+v", purpose, p.Caches)
		}
		if !slices.Contains(p.FS.Hide, store.Path()) {
			t.Errorf("%s: the store %s is not hidden: %q", purpose, store.Path(), p.FS.Hide)
		}
		p.Release()
		if p.CacheLock() != nil {
			t.Errorf("%s: Release kept the caches' lock", purpose)
		}
	}
	f.OpenCaches = func(string) (*cache.Store, error) { return nil, errors.New("no room") }
	if p := mustPlan(t, r, f); p.Caches != nil || len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "no caches for this shell: no room") {
		t.Errorf("a store that cannot open: %+v, %q", p.Caches, p.Warnings)
	}
}

func TestPlanBundle(t *testing.T) {
	r, f := base(t)
	r.Purpose, r.Isolation = Bundle, container.Auto
	f.Namespaced = false // a bundle describes a container wherever it is written
	r.BundleDir = filepath.Join(filepath.Dir(r.FS.Home), "bundle")
	r.Config = &policy.Config{Network: policy.NetworkConfig{Allow: []string{"example.com"}}}
	p := mustPlan(t, r, f)
	if p.BundleDir != r.BundleDir || !p.Namespaced || p.Network.ProxyPort != 0 || len(p.Network.Allow) != 0 {
		t.Errorf("bundle plan %+v", p)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "does not apply to a bundle") {
		t.Errorf("warnings %q", p.Warnings)
	}
	if s := p.Spec(); s.Command != "echo hi" || s.FS.Workdir != p.FS.Workdir {
		t.Errorf("spec %+v", s)
	}
}

func TestPlanSurvivesTheTrip(t *testing.T) {
	r, f := base(t)
	r.Purpose, r.Name = Background, "web"
	r.Command = []string{"touch", "caf\xe9"} // latin-1 bytes: JSON would change them
	r.Env = []string{"LATIN=caf\xe9"}
	r.Expose, r.AllowHosts, r.AddHosts = []string{"5173"}, []string{"example.com:443"}, []string{"api.test:198.18.0.2"}
	r.Timeout, r.Limits = time.Minute, policy.Limits{Pids: 64}
	r.Ready = ReadyRequest{Log: "ready"}
	p := mustPlan(t, r, f)
	back := trip(t, p)
	if back.Argv[1] != "caf\xe9" || policy.EnvValue(back.Env, "LATIN") != "caf\xe9" {
		t.Errorf("bytes changed on the way: %q %q", back.Argv, back.Env)
	}
	// JSON-able too, for whoever reads a plan.
	if _, err := json.Marshal(p); err != nil {
		t.Error(err)
	}
}

// trip sends p the way run -d sends it to the supervisor, and checks that
// it arrives as it left.
func trip(t testing.TB, p *Plan) *Plan {
	t.Helper()
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	want := *p
	want.Warnings, want.limitFrom, want.cache = nil, limitSentence{}, nil
	if !reflect.DeepEqual(normal(back), normal(&want)) {
		t.Fatalf("changed on the way:\n%+v\nwant\n%+v", back, want)
	}
	return back
}

// normal makes empty lists and maps nil, which gob does not tell apart.
func normal(p *Plan) *Plan {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if v.Field(i).CanSet() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Map:
			if v.Len() == 0 && v.CanSet() {
				v.Set(reflect.Zero(v.Type()))
				return
			}
			if v.Kind() == reflect.Slice {
				for i := range v.Len() {
					walk(v.Index(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(p))
	return p
}

func TestOptions(t *testing.T) {
	r, f := base(t)
	r.Expose = []string{"5173", "8080"}
	r.AllowHosts = []string{"example.com"}
	r.StateDir = filepath.Join(r.FS.Home, "state")
	p := mustPlan(t, r, f)
	if !p.Network.Grants {
		t.Fatal("grants are on by default with a state dir")
	}
	ls := []net.Listener{&fakeListener{}, &fakeListener{}}
	asked := false
	o := p.Options(Wiring{ID: "x", Listeners: ls, Probes: true, Grants: func() []policy.Grant {
		asked = true
		return []policy.Grant{{Pattern: policy.HostPattern{Host: "granted.test"}}}
	}})
	if o.ID != "x" || o.Command != p.Command || !o.Probes || len(o.Exposes) != 2 || o.Exposes[1].Port != 8080 || o.Exposes[1].Listener != ls[1] {
		t.Errorf("options %+v", o)
	}
	if o.Proxy == nil || o.Proxy.Port != p.Network.ProxyPort {
		t.Fatalf("proxy %+v", o.Proxy)
	}
	if ok, _ := o.Proxy.Rules.Decide("granted.test", 443); !ok || !asked {
		t.Error("the session's grants do not reach the proxy")
	}
}

type fakeListener struct{ net.Listener }

func TestParseAddHosts(t *testing.T) {
	h, err := ParseAddHosts([]string{"api.test:198.18.0.2", "V6.Test:[fd00::2]", "m.test:::ffff:10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]netip.Addr{"api.test": netip.MustParseAddr("198.18.0.2"), "v6.test": netip.MustParseAddr("fd00::2"), "m.test": netip.MustParseAddr("10.0.0.1")}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("%s: %v, want %v", k, h[k], v)
		}
	}
	for _, bad := range []string{"noaddress", "name:notanip", ":1.2.3.4", "1.2.3.4:5.6.7.8", "a b:1.2.3.4"} {
		if _, err := ParseAddHosts([]string{bad}); !errors.Is(err, ErrUsage) {
			t.Errorf("ParseAddHosts(%q): %v", bad, err)
		}
	}
}
