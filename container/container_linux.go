package container

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	_ "github.com/opencontainers/cgroups/devices" // device rules for root's cgroups, as runc does
	"github.com/opencontainers/runc/libcontainer"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/sirupsen/logrus"
	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/policy"
)

// containerSupported is true: Linux has the namespaces a container needs.
const containerSupported = true

// InitDir holds cshell's own files inside every container: initPath, the
// cshell binary, which the container's PID 1 runs as the tiny init (see
// Pid1).
const (
	InitDir  = "/.cshell"
	initPath = InitDir + "/cshell"
)

// pid1Arg is the hidden argument that makes the binary act as PID 1.
const pid1Arg = "__pid1"

// libcontainer writes warnings through logrus's global logger (inside an
// engine, "unable to get oom kill count" at a failed start): library
// text on cshell's stderr, about what cshell already says in its own
// words (the start's error, doctor's cause and fix). Nothing of it is
// shown.
func init() { logrus.SetOutput(io.Discard) }

// specconvMu serializes specconv.CreateLibcontainerConfig (see Start).
var specconvMu sync.Mutex

// containerRunner starts rootless containers with libcontainer.
type containerRunner struct {
	dir       string // this user's runtime directory, holding the three below
	stateRoot string // libcontainer's state directories
	rootfs    string // empty mount points and the host's top-level symlinks
	self      string // this binary, bind-mounted as initPath
	hidden    string // mode 0000 "dir" and "file", bound over hidden paths
	resolv    string // the resolv.conf that names the shell's own resolver
	hosts     string // the hosts file of a shell with a resolver
}

var _ Runner = (*containerRunner)(nil)

func newContainerRunner() (Runner, error) {
	dir, err := runtimeDir()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: find the cshell binary: %w", ErrSandbox, err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return nil, fmt.Errorf("%w: find the cshell binary: %w", ErrSandbox, err)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	r := &containerRunner{
		dir:       dir,
		stateRoot: filepath.Join(dir, "containers"),
		rootfs:    filepath.Join(dir, "rootfs"),
		self:      self,
		hidden:    filepath.Join(dir, "hidden"),
		resolv:    filepath.Join(dir, "resolv.conf"),
		hosts:     filepath.Join(dir, "hosts"),
	}
	if err := prepareRootfs(r.rootfs); err != nil {
		return nil, fmt.Errorf("%w: prepare the root filesystem in %s: %w", ErrSandbox, r.rootfs, err)
	}
	if err := prepareHidden(r.hidden); err != nil {
		return nil, fmt.Errorf("%w: prepare %s: %w", ErrSandbox, r.hidden, err)
	}
	for _, f := range []struct{ path, text string }{{r.resolv, resolvConfText}, {r.hosts, hostsText}} {
		if err := prepareShared(f.path, f.text); err != nil {
			return nil, fmt.Errorf("%w: prepare %s: %w", ErrSandbox, f.path, err)
		}
	}
	collectGarbage(r.stateRoot)
	return r, nil
}

func (r *containerRunner) Isolation() Isolation { return Container }

// ownDevices gives cfg copies of the devices and device rules it shares
// with specconv's package-level defaults.
func ownDevices(cfg *configs.Config) {
	for i, d := range cfg.Devices {
		c := *d
		cfg.Devices[i] = &c
	}
	if cfg.Cgroups != nil && cfg.Cgroups.Resources != nil {
		for i, r := range cfg.Cgroups.Resources.Devices {
			c := *r
			cfg.Cgroups.Resources.Devices[i] = &c
		}
	}
}

func (r *containerRunner) Start(s *Spec) (Shell, error) {
	if s.Held && (s.Sockets == nil || s.Terminal) {
		return nil, fmt.Errorf("%w: a held shell needs a socket factory and no terminal", ErrSandbox)
	}
	if len(s.Trust) > 0 {
		// Bound into the shell at its start; the mount keeps the file
		// after its name here is gone.
		f, err := r.writeTrust(s.Trust)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
		}
		defer os.Remove(f)
		s.trustFile = f
	}
	spec, checks, im, err := r.spec(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	var binds []earlyBind
	spec.Mounts, checks, binds = r.early(im, spec.Mounts, checks)
	// specconv sets the owner of its default devices, which every config
	// shares (pointers into one package-level list): two starts at once
	// write them at once, and one start's write meets another's encoding
	// of its config. One specconv at a time, and each config gets devices
	// of its own before the lock is let go.
	specconvMu.Lock()
	cfg, err := specconv.CreateLibcontainerConfig(&specconv.CreateOpts{
		CgroupName:       s.ID,
		Spec:             spec,
		RootlessEUID:     !fullRoot(),
		RootlessCgroups:  !ownCgroups(),
		UseSystemdCgroup: delegatedLimits(), // never as root: delegated() is empty there
	})
	if err == nil {
		ownDevices(cfg)
	}
	specconvMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
	}
	// The container dies with the thread that started it (see run below).
	cfg.ParentDeathSignal = int(unix.SIGKILL)
	if s.Redirect {
		cfg.Networks = nil // the init brings loopback up itself, with the rules (MaybePrestage)
	}

	c, err := libcontainer.Create(r.stateRoot, s.ID, cfg)
	if err != nil {
		return nil, explain(fmt.Errorf("create container %s: %w", s.ID, err))
	}
	nnp := true
	p := &libcontainer.Process{
		Args:            pid1Args(checks, s.AllowUserNamespaces, s.QuietWrites, s.Held, s.args(hostLookPath)),
		Env:             s.Env,
		Cwd:             s.FS.Start,
		NoNewPrivileges: &nnp,
		Capabilities:    &configs.Capabilities{},
		Init:            true,
		// Rootless, libcontainer cannot seal its binary with an overlayfs
		// and copies all of it into a memfd for each start (a third of a
		// rootless start). The copy guards against a container process
		// reaching runc init's executable; here none exists while runc
		// init runs (a new PID namespace, this is its first process), and
		// runc init then executes the read-only bind at initPath. Root
		// keeps the seal, which costs it nothing. docs/security.md,
		// "cshell's own state".
		NoExeClone: !fullRoot(),
		// The move into the shell's cgroups waits, as the first move in a
		// while, for an RCU grace period (cgwarm_linux.go); libcontainer
		// makes it while runc init sets the shell up, and waits for it
		// before the cgroups' limits are set and before the command may
		// run, the private cgroup namespace made by runc init once in them
		// (third_party/runc.patch).
		LateCgroups: ownCgroups(),
	}
	if s.AllowUserNamespaces {
		// A user namespace that maps root needs its maker to have held
		// CAP_SETFCAP where it made it (the kernel's check since 5.12);
		// without it unshare -r, bubblewrap and rootless podman fail. It is
		// a capability over the shell's own namespace only, and file
		// capabilities it could set count for nothing under no_new_privs.
		c := []string{"CAP_SETFCAP"}
		p.Capabilities = &configs.Capabilities{Bounding: c, Effective: c, Permitted: c}
	}
	if s.Limits.Pids > 0 && !limitCgroups() {
		// Rootless: no cgroup, but the kernel counts processes per user
		// namespace (since 5.14), so RLIMIT_NPROC inside bounds this shell's
		// tasks alone. Memory is the caller's watchdog's.
		n := uint64(s.Limits.Pids)
		p.Rlimits = []configs.Rlimit{{Type: unix.RLIMIT_NPROC, Hard: n, Soft: n}}
	}
	// fd 3: the factory, fd 4: the events pipe, fd 5: the init's request,
	// each /dev/null when missing before a later one.
	var prestageParent *os.File
	passed := []*os.File{s.Sockets, s.Events, nil}
	// As root cshell makes the egress's rules itself, in the namespace the
	// init sends first, while the init goes on (rulesFromParent).
	rulesHere := s.Redirect && fullRoot()
	if s.Redirect || len(im.standIns) > 0 || len(im.topBinds) > 0 {
		req := prestage{Redirect: s.Redirect && !rulesHere, NetNS: rulesHere, Hide: im.standIns, Root: r.rootfs, Top: im.topBinds, Binds: binds}
		parent, child, err := prestagePair(req)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
		}
		defer child.Close()
		prestageParent, passed[2] = parent, child
	}
	prestageChild := passed[2]
	for len(passed) > 0 && passed[len(passed)-1] == nil {
		passed = passed[:len(passed)-1]
	}
	for i, f := range passed {
		if f == nil {
			devnull, err := os.Open(os.DevNull)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
			}
			defer devnull.Close()
			passed[i] = devnull
		}
	}
	p.ExtraFiles = passed
	if prestageParent != nil {
		defer prestageParent.Close()
	}
	var consoleSock *os.File
	if s.Terminal {
		parent, child, err := socketPair()
		if err != nil {
			_ = c.Destroy()
			return nil, fmt.Errorf("%w: %w", ErrSandbox, err)
		}
		defer child.Close()
		consoleSock = parent
		p.ConsoleSocket = child
	} else {
		p.Stdin, p.Stdout, p.Stderr = s.Stdin, s.Stdout, s.Stderr
	}

	sh := &ctr{c: c, p: p, done: make(chan struct{}), memLimited: s.Limits.Memory > 0 && limitCgroups(), kills: s.MemoryKills, id: s.ID, checks: checks}
	started := make(chan error, 1)
	rules := make(chan error, 1)
	if rulesHere {
		go func() { rules <- rulesFromParent(prestageParent) }()
	} else {
		rules <- nil
	}
	// stop ends a container that started, when what follows fails.
	stop := func() {
		if consoleSock != nil {
			consoleSock.Close()
		}
		_ = sh.Kill()
		<-sh.done
		_ = c.Destroy()
	}
	go sh.run(started)
	err = <-started
	if prestageChild != nil {
		// The init has its own copy by now, or died: then rulesFromParent
		// reads the end of the stream.
		prestageChild.Close()
	}
	if err != nil {
		if consoleSock != nil {
			consoleSock.Close()
		}
		_ = c.Destroy()
		<-rules
		return nil, explain(fmt.Errorf("start container %s: %w", s.ID, err))
	}
	if err := <-rules; err != nil {
		stop()
		return nil, explain(err)
	}
	if prestageParent != nil {
		tracker, err := PrestageDone(prestageParent)
		if err != nil {
			stop()
			return nil, explain(fmt.Errorf("the container's init could not prepare the shell: %w", err))
		}
		if tracker != nil && s.Tracker != nil {
			s.Tracker(tracker)
		} else if tracker != nil {
			tracker.Close()
		}
	}
	if consoleSock != nil {
		sh.console, err = recvFile(consoleSock)
		if err != nil {
			stop()
			return nil, fmt.Errorf("%w: receive the terminal: %w", ErrSandbox, err)
		}
		consoleSock.Close()
	}
	return sh, nil
}

// ctr is one running container.
type ctr struct {
	c       *libcontainer.Container
	p       *libcontainer.Process
	console *os.File

	done chan struct{} // closed when the init has been reaped
	exit Exit
	err  error

	memLimited bool // its cgroup bounds memory: an OOM kill there is the limit's
	kills      func(OOMKill)
	oomTold    atomic.Int64 // the kills told (watchOOM)
	oomCount   *oomCounter  // the kills counted (memLimited)
	id         string
	checks     []mountCheck // what its binds were made of
}

// Unchanged reports whether every path the shell's binds were made of is
// still the file it was then (a held shell made a while ago: a folder
// replaced since, or a link put on its way, would make a cold start bind
// something else).
func (sh *ctr) Unchanged() bool {
	for _, c := range sh.checks {
		if id, err := identify(c.src); err != nil || id != c.id {
			return false
		}
	}
	return true
}

// run starts the container and waits for it on one locked OS thread. The
// parent-death signal fires when the thread that forked the container ends,
// not the process, so that thread must outlive the container.
func (sh *ctr) run(started chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
	if err := runPrimed(sh.c, sh.p); err != nil {
		started <- err
		return
	}
	if sh.memLimited {
		sh.oomCount = newOOMCounter(sh.c)
		if sh.kills != nil {
			watchOOM(sh.c, sh.id, sh.kills, &sh.oomTold, sh.oomCount)
		}
	}
	started <- nil
	st, err := sh.p.Wait()
	switch {
	case st == nil:
		sh.err = err
	default:
		ws := st.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			sh.exit = Exit{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
		} else {
			sh.exit = Exit{Code: ws.ExitStatus()}
		}
		// The OOM killer ended the command (PID 1 passes on its status).
		if sh.memLimited && sh.exit.Code == 128+int(unix.SIGKILL) && sh.oomCount.count() > 0 {
			sh.exit.Limit = "memory"
		}
	}
	if sh.memLimited && sh.kills != nil {
		waitOOMTold(sh.oomCount, &sh.oomTold, sh.kills)
	}
	close(sh.done)
}

// The cgroup library (opencontainers/cgroups v0.1.0) learns some file
// names on its first Set and keeps them in shared fields without a lock
// (BlkioGroup.detectWeightFilenames), so two first starts at once in one
// process, as serve makes them, race there. Until one start has succeeded,
// starts go one at a time; after it the fields are only read.
var (
	primeMu sync.Mutex
	primed  atomic.Bool
)

func runPrimed(c *libcontainer.Container, p *libcontainer.Process) error {
	if primed.Load() {
		return c.Run(p)
	}
	primeMu.Lock()
	if primed.Load() {
		primeMu.Unlock()
		return c.Run(p)
	}
	defer primeMu.Unlock()
	err := c.Run(p)
	if err == nil {
		primed.Store(true)
	}
	return err
}

func (sh *ctr) Pid() int {
	pid, _ := sh.p.Pid()
	return pid
}

func (sh *ctr) Console() *os.File { return sh.console }

// Signal goes to the container's init, which passes it to the command's
// process group.
func (sh *ctr) Signal(sig os.Signal) error {
	select {
	case <-sh.done:
		return nil
	default:
	}
	if err := sh.p.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// Kill ends the init; the kernel then kills everything in its PID namespace.
func (sh *ctr) Kill() error { return sh.Signal(unix.SIGKILL) }

func (sh *ctr) Wait() (Exit, error) {
	<-sh.done
	return sh.exit, sh.err
}

func (sh *ctr) Close() error {
	if sh.console != nil {
		sh.console.Close()
	}
	select {
	case <-sh.done:
	default:
		_ = sh.Kill()
		<-sh.done
	}
	return sh.c.Destroy()
}

// spec builds the OCI runtime spec of a shell: the host's filesystem
// read-only, the policy's writable, read-only and hidden paths, private
// /tmp, /run and /dev, and every namespace, with no capability left.
func (r *containerRunner) spec(s *Spec) (*specs.Spec, []mountCheck, initMounts, error) {
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	noCaps := &specs.LinuxCapabilities{Bounding: []string{}, Effective: []string{}, Permitted: []string{}}
	sp := &specs.Spec{
		Version: specs.Version,
		Root:    &specs.Root{Path: r.rootfs, Readonly: true},
		Process: &specs.Process{
			Terminal:        s.Terminal,
			Args:            []string{initPath},
			Env:             s.Env,
			Cwd:             s.FS.Start,
			NoNewPrivileges: true,
			Capabilities:    noCaps,
		},
		Hostname: "cshell",
		Mounts: []specs.Mount{
			{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
			{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"}},
			{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}},
			{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
			{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}},
			{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
			{Destination: "/run", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=755"}},
			{Destination: initPath, Type: "bind", Source: r.self, Options: []string{"bind", "ro", "nosuid", "nodev"}},
		},
		Linux: &specs.Linux{
			UIDMappings: []specs.LinuxIDMapping{{HostID: uid, ContainerID: 0, Size: 1}},
			GIDMappings: []specs.LinuxIDMapping{{HostID: gid, ContainerID: 0, Size: 1}},
			Sysctl: map[string]string{
				// Servers may bind low ports of the shell's own network.
				"net.ipv4.ip_unprivileged_port_start": "0",
			},
			Namespaces: []specs.LinuxNamespace{
				{Type: specs.UserNamespace}, {Type: specs.PIDNamespace}, {Type: specs.MountNamespace},
				{Type: specs.NetworkNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
				{Type: specs.CgroupNamespace},
			},
			MaskedPaths: []string{
				"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
				"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
				"/sys/firmware",
			},
			ReadonlyPaths: []string{
				"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
			},
		},
	}
	if s.AllowUserNamespaces && os.Geteuid() != 0 {
		// A nested sandbox mounts its own /proc (and /sys), which the kernel
		// allows only where the existing one is fully visible: no masked or
		// read-only paths over it. Rootless they guard nothing the invoker
		// could not read or write anyway (the shell's root is the invoker
		// there, and the files are the host root's). As root they stay:
		// /proc/sys would be the host's to write.
		sp.Linux.MaskedPaths, sp.Linux.ReadonlyPaths = nil, nil
	}
	switch {
	case ownCgroups():
		// Root's containers get cgroups; deny every device but the defaults.
		sp.Linux.Resources = &specs.LinuxResources{Devices: []specs.LinuxDeviceCgroup{{Allow: false, Access: "rwm"}}}
		cgroupLimits(sp.Linux.Resources, s.Limits)
	case delegatedLimits():
		// A scope of the user's systemd manager (delegate_linux.go):
		// the limits, and no device rules (the shell's user namespace
		// leaves it no device to open that the user could not).
		sp.Linux.CgroupsPath = "user.slice:cshell:" + s.ID
		sp.Linux.Resources = &specs.LinuxResources{}
		cgroupLimits(sp.Linux.Resources, s.Limits)
	}
	if s.Limits.Memory > 0 {
		// The shell's own tmpfs and its System V shared memory are memory
		// too (a cgroup counts them; the watchdog counts the tmpfs): their
		// sizes together stay within the limit, /tmp taking half of it.
		share := map[string]int64{"/tmp": 2, "/run": 8, "/dev/shm": 8}
		for i, m := range sp.Mounts {
			if d, ok := share[m.Destination]; ok && m.Type == "tmpfs" {
				size := fmt.Sprintf("size=%dk", s.Limits.Memory/d>>10)
				sp.Mounts[i].Options = append(slices.DeleteFunc(slices.Clone(m.Options), func(o string) bool { return strings.HasPrefix(o, "size=") }), size)
			}
		}
		// The IPC namespace is the shell's own: its segments may take a
		// quarter of the limit in all.
		pages := s.Limits.Memory / 4 / int64(os.Getpagesize())
		sp.Linux.Sysctl["kernel.shmall"] = strconv.FormatInt(pages, 10)
		sp.Linux.Sysctl["kernel.shmmax"] = strconv.FormatInt(s.Limits.Memory/4, 10)
	}
	binds, checks, im, err := r.binds(s)
	if err != nil {
		return nil, nil, im, err
	}
	sp.Mounts = append(sp.Mounts, binds...)
	return sp, checks, im, nil
}

// initMounts is what of a shell's mounts its container's init can make
// itself (prestage_linux.go), as binds found them.
type initMounts struct {
	standIns []standIn // hidden paths the init covers
	covered  []string  // hidden paths under a hidden directory it covers
	topBinds []string  // top-level directories it binds into the root
}

// binds lists the bind mounts: each top-level host directory read-only,
// then the policy's paths, shallowest first so that deeper ones land on
// top. Every directory on the way from a writable mount
// down to a deeper mount becomes a mount point itself, so that no shell
// can rename it and carry a hidden path, cshell's state or a read-only
// path away with it (rename(2) refuses a mount point: EBUSY).
func (r *containerRunner) binds(s *Spec) ([]specs.Mount, []mountCheck, initMounts, error) {
	var im initMounts
	ro := []string{"rbind", "rro", "nosuid", "nodev"}
	rw := []string{"rbind", "rw", "nosuid", "nodev"}
	var top []specs.Mount
	entries, err := os.ReadDir("/")
	if err != nil {
		return nil, nil, im, err
	}
	for _, e := range entries {
		name := "/" + e.Name()
		if !e.IsDir() || privateTop[name] || emptyDir(name) {
			// Symlinks live in the rootfs; files and private dirs are not
			// shared; an empty directory looks the same as the rootfs's own
			// empty, read-only mount point, and each mount costs start-up time.
			continue
		}
		top = append(top, specs.Mount{Destination: name, Type: "bind", Source: name, Options: ro})
	}
	for _, m := range top {
		im.topBinds = append(im.topBinds, m.Source)
	}
	type bind struct {
		path     string
		writable bool
		source   string // "": path itself
	}
	var policy []bind
	policy = append(policy, bind{path: s.FS.Workdir, writable: true})
	for _, p := range s.FS.Write {
		policy = append(policy, bind{path: p, writable: true})
	}
	for _, p := range s.FS.Read {
		policy = append(policy, bind{path: p})
	}
	for _, c := range s.FS.Caches {
		policy = append(policy, bind{path: c.Path, writable: true, source: c.Source})
	}
	// Hidden paths get a mode 0000 stand-in: with no capability inside,
	// not even the owner may read it (masking with /dev/null would read
	// as an empty file instead of failing). Missing ones are made first.
	hide := slices.Clone(s.FS.Hide)
	for _, m := range s.FS.Missing {
		err := makeMissing(m)
		if errors.Is(err, unix.EROFS) && s.FS.Writable(m.Path) == "" {
			// On a read-only filesystem (a container's image, say), and
			// in no writable bind: the shell cannot make it either.
			continue
		}
		if err != nil {
			return nil, nil, im, fmt.Errorf("make %s to hide it: %w", m.Path, err)
		}
		hide = append(hide, m.Path)
	}
	if r.visible(s.FS) {
		// The runtime directory holds the other containers' state (their
		// environment too) and the hidden stand-ins: out of sight whenever
		// a bind or a shared part of the host would show it.
		hide = append(hide, r.dir)
	}
	var extra []specs.Mount
	var checks []mountCheck
	dests := map[string]bool{}
	// bindAs binds src at dest and remembers what must be found there: the
	// source as it is now (its path has no link left: the policy resolved
	// it, so a link found on the way means it changed meanwhile).
	bindAs := func(dest, src string, opts []string) error {
		id, err := identify(src)
		if err != nil {
			return err
		}
		extra = append(extra, specs.Mount{Destination: dest, Type: "bind", Source: src, Options: opts})
		checks = append(checks, mountCheck{path: dest, id: id, src: src})
		dests[dest] = true
		return nil
	}
	for _, b := range policy {
		opts := ro
		if b.writable {
			opts = rw
		}
		src := b.path
		if b.source != "" {
			src = b.source
		}
		if err := bindAs(b.path, src, opts); err != nil {
			return nil, nil, im, err
		}
	}
	// A stand-in is made by the container's init before libcontainer
	// assembles the root (standIns, prestage_linux.go): on the host's
	// path, in the container's own mount namespace, so that the binds
	// that show that path carry it. That costs two mount calls instead of
	// a mount entry's checks (about 45 calls each). A hidden path that
	// holds a bind's source or destination, or another file the start
	// reads, stays a mount entry, made after the binds it holds.
	var reads []string // what the start reads from this machine's paths
	for _, b := range policy {
		reads = append(reads, b.path, b.source)
	}
	reads = append(reads, r.rootfs, r.self, r.resolv, r.hosts, s.trustFile)
	holds := func(p string) bool {
		for _, f := range reads {
			if f != "" && underOrSame(f, p) {
				return true
			}
		}
		return false
	}
	// shown reports whether a bind carries the host's p into the shell
	// (else the path is the shell's own /tmp, /run…, where only a mount
	// entry puts a stand-in).
	shown := func(p string) bool {
		for _, b := range policy {
			if underOrSame(p, b.path) {
				return true
			}
		}
		for _, m := range top {
			if underOrSame(p, m.Destination) {
				return true
			}
		}
		return false
	}
	slices.SortFunc(hide, func(a, b string) int { return depth(a) - depth(b) })
	for _, p := range hide {
		src := filepath.Join(r.hidden, "file")
		if st, err := os.Lstat(p); err == nil && st.IsDir() {
			src = filepath.Join(r.hidden, "dir")
		}
		if err := bindAs(p, src, []string{"bind", "ro", "nosuid", "nodev", "noexec"}); err != nil {
			return nil, nil, im, err
		}
		switch {
		case holds(p) || !shown(p):
		case slices.ContainsFunc(im.standIns, func(e standIn) bool { return e.Dir && underOrSame(p, e.Dest) }):
			im.covered = append(im.covered, p) // under a hidden directory already: out of sight with it
		default:
			im.standIns = append(im.standIns, standIn{Dest: p, Source: src, Dir: strings.HasSuffix(src, "dir")})
		}
	}
	// Pin the directories between a writable mount and a deeper mount.
	writableAt := func(p string) (covered, writable bool) {
		best := -1
		for _, b := range policy {
			if underOrSame(p, b.path) && depth(b.path) > best {
				best, writable = depth(b.path), b.writable
			}
		}
		return best >= 0, writable
	}
	// A directory can be renamed when the deepest bind it lies in is
	// writable (and it is not that bind's root, a mount point already).
	var mounted []string
	for d := range dests {
		mounted = append(mounted, d)
	}
	for _, dest := range mounted {
		for a := filepath.Dir(dest); a != "/" && a != "."; a = filepath.Dir(a) {
			covered, writable := writableAt(a)
			if !covered {
				break // above every bind: the host's view, read-only
			}
			if dests[a] || !writable {
				continue
			}
			if err := bindAs(a, a, rw); err != nil {
				return nil, nil, im, err
			}
		}
	}
	sort.SliceStable(extra, func(i, j int) bool { return depth(extra[i].Destination) < depth(extra[j].Destination) })
	mounts := append(top, extra...)
	for _, f := range []struct{ dest, src string }{{resolvConf, r.resolv}, {hostsFile, r.hosts}} {
		writable := false // in a writable bind, a shell could swap it for a link
		for _, b := range policy {
			writable = writable || b.writable && underOrSame(f.dest, b.path)
		}
		if _, err := os.Lstat(f.dest); errors.Is(err, os.ErrNotExist) {
			// None to cover (a container of an engine's --network none, a
			// minimal root), and none can be made in the read-only host:
			// resolver libraries then ask 127.0.0.1, where nothing answers,
			// and the proxy still resolves names on this side.
			continue
		}
		if s.Resolver && !writable {
			// Over the host's file, or where its link leads (inside the
			// container: /run is its own tmpfs); last, over the /etc bind.
			mounts = append(mounts, specs.Mount{Destination: f.dest, Type: "bind", Source: f.src,
				Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
		}
	}
	if s.trustFile != "" {
		mounts = append(mounts, specs.Mount{Destination: TrustPath, Type: "bind", Source: s.trustFile,
			Options: []string{"bind", "ro", "nosuid", "nodev", "noexec"}})
	}
	return mounts, checks, im, nil
}

// early takes out of a shell's mounts (and their checks) what its
// container's init makes itself before libcontainer's start-up
// (prestage_linux.go), a few calls each instead of a mount entry's checks
// (about 45 calls and two mounts each): the top-level binds (the first
// bind of each: a policy's bind of the same directory stays), the
// policy's binds under them (returned) but those a hidden path that
// stays a mount entry lies over (it must come first), and the stand-ins
// that binds carry. A bundle for another runtime keeps them all.
func (r *containerRunner) early(im initMounts, mounts []specs.Mount, checks []mountCheck) ([]specs.Mount, []mountCheck, []earlyBind) {
	standIn := map[string]string{} // destination -> source
	for _, h := range im.standIns {
		standIn[h.Dest] = h.Source
	}
	covered := map[string]bool{}
	for _, p := range im.covered {
		covered[p] = true
	}
	top := map[string]bool{}
	for _, t := range im.topBinds {
		top[t] = true
	}
	isStandIn := func(m specs.Mount) bool {
		return m.Source == filepath.Join(r.hidden, "file") || m.Source == filepath.Join(r.hidden, "dir")
	}
	// In the mounts' order (the top-level binds, then shallowest first): a
	// bind under one that stays a mount entry must stay one too, made
	// after it.
	var (
		kept  []string
		binds []earlyBind
	)
	topDone := map[string]bool{} // the first bind of a top-level directory is its own (binds lists them first)
	mounts = slices.DeleteFunc(mounts, func(m specs.Mount) bool {
		if m.Type != "bind" {
			return false
		}
		if top[m.Destination] && m.Source == m.Destination && !topDone[m.Destination] {
			topDone[m.Destination] = true
			return true
		}
		if isStandIn(m) && (standIn[m.Destination] == m.Source || covered[m.Destination]) {
			return true
		}
		first := "/" + strings.SplitN(strings.TrimPrefix(m.Destination, "/"), "/", 2)[0]
		if isStandIn(m) || !slices.Contains(m.Options, "rbind") || !top[first] || top[m.Destination] ||
			slices.ContainsFunc(kept, func(k string) bool { return underOrSame(m.Destination, k) }) {
			kept = append(kept, m.Destination)
			return false
		}
		binds = append(binds, earlyBind{Dest: m.Destination, Source: m.Source, Writable: slices.Contains(m.Options, "rw")})
		return true
	})
	checks = slices.DeleteFunc(checks, func(c mountCheck) bool { return covered[c.path] })
	return mounts, checks, binds
}

// writeTrust writes a shell's trusted certificates into a file of its
// own in the runtime directory (public: certificates are).
func (r *containerRunner) writeTrust(pem []byte) (string, error) {
	dir := filepath.Join(r.dir, "trust")
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("prepare %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "shell-*.pem")
	if err != nil {
		return "", fmt.Errorf("write the shell's certificates: %w", err)
	}
	_, werr := f.Write(pem)
	cerr := f.Close()
	if err := errors.Join(werr, cerr, os.Chmod(f.Name(), 0o644)); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write the shell's certificates: %w", err)
	}
	return f.Name(), nil
}

// resolvConf is where resolver libraries find their name servers, and
// hostsFile the names they look up before asking one.
const (
	resolvConf = "/etc/resolv.conf"
	hostsFile  = "/etc/hosts"
)

func underOrSame(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// visible reports whether the runtime directory would show in the shell:
// under one of its binds, or in a shared part of the host (TMPDIR is
// /var/tmp, say).
func (r *containerRunner) visible(fsys policy.Filesystem) bool {
	if first, _, _ := strings.Cut(strings.TrimPrefix(r.dir, "/"), "/"); !privateTop["/"+first] {
		return true
	}
	for _, p := range append(append([]string{fsys.Workdir}, fsys.Write...), fsys.Read...) {
		if underOrSame(r.dir, p) {
			return true
		}
	}
	return false
}

// mountCheck is what PID 1 must find at path before the command runs:
// the file with this identity, reached with no symbolic link on the way.
// runc's init looks the paths up again when it mounts, after cshell
// resolved them; a shell that swapped a directory for a link meanwhile
// would have had another directory bound, or a hidden path bound
// elsewhere. PID 1 checks, and refuses to run the command (exit 125).
type mountCheck struct {
	path string // inside
	id   string // "DEV:INO"
	src  string // on the host
}

// identify returns the identity of path, which must have no link in it.
func identify(path string) (string, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		fd, err = unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if errors.Is(err, unix.ELOOP) {
		return "", fmt.Errorf("%s changed while the shell was starting (a symbolic link appeared on the way); try again", path)
	}
	if err != nil {
		return "", fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
}

// pid1Args is PID 1's command line: the mount checks, whether the shell
// may make user namespaces (the other syscall filter), then the command.
func pid1Args(checks []mountCheck, allowUserns, quietWrites, held bool, command []string) []string {
	args := append([]string{initPath, pid1Arg}, checkArgs(checks)...)
	if allowUserns {
		args = append(args, "--allow-userns")
	}
	if os.Geteuid() == 0 {
		// The host's root (or an engine's): the filter keeps a user
		// namespace of the shell's own from setting file capabilities.
		args = append(args, "--root")
	}
	if quietWrites {
		args = append(args, "--quiet-writes")
	}
	if held {
		return append(args, "--held") // the command comes on fd 3
	}
	return append(append(args, "--"), command...)
}

// Args are the words a held init runs (Spec.Held): the command line
// with bash -c, or argv as given.
func Args(command string, argv []string) []string {
	s := Spec{Command: command, Argv: argv}
	return s.args(hostLookPath)
}

// checkArgs are PID 1's arguments that list the checks, one a mount:
// "--check=DEV:INO PATH".
func checkArgs(checks []mountCheck) []string {
	args := make([]string, len(checks))
	for i, c := range checks {
		args[i] = "--check=" + c.id + " " + c.path
	}
	return args
}

// makeMissing makes a hidden path that does not exist yet: an empty
// directory (0700) or file (0600), in its parent as resolved, without
// following a link.
func makeMissing(m policy.MissingPath) error {
	parent, err := unix.Openat2(unix.AT_FDCWD, filepath.Dir(m.Path), &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		parent, err = unix.Open(filepath.Dir(m.Path), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	name := filepath.Base(m.Path)
	if m.Dir {
		err = unix.Mkdirat(parent, name, 0o700)
	} else {
		var fd int
		if fd, err = unix.Openat(parent, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600); err == nil {
			unix.Close(fd)
		}
	}
	if errors.Is(err, unix.EEXIST) {
		var st unix.Stat_t
		if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return fmt.Errorf("a symbolic link appeared there")
		}
		return nil // made meanwhile (by another start, say)
	}
	return err
}

// cgroupLimits puts a shell's limits into its cgroup's resources.
func cgroupLimits(r *specs.LinuxResources, l policy.Limits) {
	if l.Memory > 0 {
		m := l.Memory
		r.Memory = &specs.LinuxMemory{Limit: &m}
		if swapAccounted() {
			r.Memory.Swap = &m // memory and swap together: no more than the limit
		}
	}
	if l.Pids > 0 {
		n := int64(l.Pids)
		r.Pids = &specs.LinuxPids{Limit: &n}
	}
	if l.CPUs > 0 {
		period := uint64(100000)
		quota := int64(l.CPUs * float64(period))
		r.CPU = &specs.LinuxCPU{Period: &period, Quota: &quota}
	}
}

// swapAccounted reports whether the memory cgroup can bound swap too.
func swapAccounted() bool {
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes"); err == nil {
		return true
	}
	_, err := os.Stat("/sys/fs/cgroup/memory.swap.max")
	return err == nil
}

// oomKills is the number of processes the OOM killer ended in the
// container's memory cgroup, and whether its file could be read (it cannot
// once the cgroup is gone: a systemd scope is removed as soon as it is
// empty).
func oomKills(c *libcontainer.Container) (int, bool) {
	st, err := c.State()
	if err != nil {
		return 0, false
	}
	for _, f := range []struct{ key, file string }{{"memory", "memory.oom_control"}, {"", "memory.events"}} {
		dir, ok := st.CgroupPaths[f.key]
		if !ok || dir == "" {
			continue
		}
		if n, ok := killsIn(filepath.Join(dir, f.file)); ok {
			return n, true
		}
	}
	return 0, false
}

// killsIn reads the oom_kill count of a memory.events or
// memory.oom_control file.
func killsIn(file string) (int, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n, true
		}
	}
	return 0, true
}

// LimitsEnforcement says what holds a container shell's limits for this
// user on this machine: its cgroup (as root, or a scope of the user's
// systemd manager where it delegates memory and pids), or cshell's
// watchdog with the kernel's per-namespace process limit (rootless
// without such a manager). CPUs need a cgroup.
func LimitsEnforcement() string {
	if limitCgroups() {
		return ByCgroup
	}
	return ByWatchdog
}

// fullRoot reports whether cshell runs as root with CAP_SYS_ADMIN, as on a
// host. Root inside a container engine has Docker's default capabilities,
// without it: libcontainer then starts shells as it does for a rootless
// user (its helper that opens bind sources from the host's mount
// namespace needs CAP_SYS_ADMIN, and a rootless start needs no helper).
var fullRoot = sync.OnceValue(func() bool {
	if os.Geteuid() != 0 {
		return false
	}
	v, ok := realHost().status("CapEff")
	if !ok {
		return true
	}
	caps, err := strconv.ParseUint(v, 16, 64)
	return err != nil || caps&(1<<unix.CAP_SYS_ADMIN) != 0
})

// ownCgroups reports whether cshell makes a cgroup per shell: as root
// with CAP_SYS_ADMIN, where the cgroup filesystem is writable. Root inside a container engine
// (Docker mounts /sys/fs/cgroup read-only) holds limits as a rootless
// user does, and its containers ask for no cgroup.
var ownCgroups = sync.OnceValue(func() bool {
	if !fullRoot() {
		return false
	}
	dir := "/sys/fs/cgroup"
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil && st.Type != unix.CGROUP2_SUPER_MAGIC {
		dir = "/sys/fs/cgroup/memory" // cgroup v1: each controller its own mount
	}
	return unix.Access(dir, unix.W_OK) == nil
})

// privateTop are top-level directories the container gets its own of.
var privateTop = map[string]bool{
	"/proc": true, "/dev": true, "/sys": true, "/tmp": true, "/run": true,
	"/lost+found": true, "/.cshell": true,
}

// emptyDir reports whether dir holds nothing and nothing is mounted on it.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	if len(names) > 0 {
		return false
	}
	var st, parent unix.Stat_t
	if unix.Stat(dir, &st) != nil || unix.Stat(filepath.Dir(dir), &parent) != nil {
		return false
	}
	return st.Dev == parent.Dev // a mount point of an empty filesystem is shared, not skipped
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// hostLookPath finds a program as the container will: the host's
// filesystem is the container's, read-only.
func hostLookPath(name string) (string, error) {
	for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", os.ErrNotExist
}
