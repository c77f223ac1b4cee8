package container

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// WriteBundle writes an OCI bundle for the shell s into dir, which must be
// missing or empty: config.json, rootfs/ (the skeleton every shell's root
// is: mount points and the host's top-level links) and hidden/ (the mode
// 0000 stand-ins bound over hidden paths). runc run and crun run start it
// unchanged: the host read-only but the policy's writable paths, hidden
// paths, private /tmp, /run and /dev, every namespace (the network one has
// loopback only), no capability, and cshell's syscall filter in the OCI
// form. What needs cshell's supervisor (exposed ports, the proxy and
// egress, the mount checks of its PID 1, the watchdog) is not in it.
func WriteBundle(dir string, s *Spec) (err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := emptyOrMissing(dir); err != nil {
		return err
	}
	defer func() {
		if err != nil { // leave no half-written bundle
			_ = os.RemoveAll(filepath.Join(dir, "rootfs"))
			_ = os.RemoveAll(filepath.Join(dir, "hidden"))
			_ = os.Remove(filepath.Join(dir, "config.json"))
			_ = os.Remove(dir) // when empty: it was missing or empty before
		}
	}()
	rt, err := runtimeDir() // hidden from the shell where it would show
	if err != nil {
		return err
	}
	r := &containerRunner{dir: rt, rootfs: filepath.Join(dir, "rootfs"), hidden: filepath.Join(dir, "hidden")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := prepareRootfs(r.rootfs); err != nil {
		return fmt.Errorf("make the bundle's root filesystem: %w", err)
	}
	if err := prepareHidden(r.hidden); err != nil {
		return fmt.Errorf("make the bundle's hidden stand-ins: %w", err)
	}
	if err := os.Chmod(r.hidden, 0o755); err != nil { // a runtime may resolve them as another user
		return err
	}
	sp, _, err := r.spec(s)
	if err != nil {
		return err
	}
	// The oldest version that states all of it: runtimes refuse versions
	// newer than they know (crun 1.8 knows 1.0 and 1.1 only).
	sp.Version = "1.0.2"
	sp.Root.Path = "rootfs"
	sp.Process.Args = s.args(hostLookPath)
	sp.Process.Terminal = false
	sp.Mounts = slices.DeleteFunc(sp.Mounts, func(m specs.Mount) bool {
		// Not cshell's PID 1; and rootless, no host directory this user
		// cannot search (/root): the shell could not look in it either,
		// and crun fails on it (it reopens each bind to make it read-only).
		return m.Destination == initPath ||
			os.Geteuid() != 0 && m.Type == "bind" && m.Source == m.Destination && filepath.Dir(m.Source) == "/" && unix.Access(m.Source, unix.X_OK) != nil
	})
	sp.Linux.Seccomp = ociFilter(s.AllowUserNamespaces)
	if !ownCgroups() && !s.Limits.Empty() {
		// r.spec gave limits to cshell's own cgroups only; the bundle's
		// runtime holds them in its cgroup (rootless: one delegated to it).
		sp.Linux.Resources = &specs.LinuxResources{}
		cgroupLimits(sp.Linux.Resources, s.Limits)
	}
	b, err := json.MarshalIndent(sp, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), append(b, '\n'), 0o644)
}

func emptyOrMissing(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s is not empty", dir)
	}
	return nil
}

// The calls of cshell's filter (seccomp_linux.c), by name: a test holds
// the lists and the C program to the same calls.
var (
	// deniedCalls are refused (EPERM) in every shell: DENIED.
	deniedCalls = []string{
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"keyctl", "add_key", "request_key",
		"bpf", "perf_event_open", "userfaultfd",
		"kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module",
		"swapon", "swapoff", "reboot",
		"clock_settime", "clock_adjtime", "settimeofday",
		"acct", "quotactl", "lookup_dcookie",
		"open_by_handle_at", "name_to_handle_at",
		"kcmp", "vhangup", "syslog", "nfsservctl",
		"quotactl_fd",
	}
	// x86Calls are refused too where the architecture has them.
	x86Calls = []string{"ioperm", "iopl", "create_module", "get_kernel_syms", "query_module", "uselib", "ustat", "sysfs", "_sysctl"}
	// mountCalls are refused unless the shell may make user namespaces:
	// MOUNTS.
	mountCalls = []string{
		"mount", "umount2", "pivot_root",
		"fsopen", "fsconfig", "fsmount", "fspick",
		"open_tree", "move_mount", "mount_setattr",
		"setns",
	}
)

// ociFilter is cshell's syscall filter as an OCI runtime spec states it
// (what runc and crun build with libseccomp): EPERM for the refused calls,
// ENOSYS for clone3 (glibc falls back to clone, whose flags a filter can
// read), EPERM for unshare and clone asking for CLONE_NEWUSER unless the
// shell may make user namespaces. Foreign ABIs (i386 and x32 on x86_64)
// are left to the runtime, which refuses architectures not listed.
func ociFilter(allowUserns bool) *specs.LinuxSeccomp {
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	arch := specs.ArchX86_64
	denied := slices.Clone(deniedCalls)
	if runtime.GOARCH == "arm64" {
		arch = specs.ArchAARCH64
	} else {
		denied = append(denied, x86Calls...)
	}
	f := &specs.LinuxSeccomp{
		DefaultAction: specs.ActAllow,
		Architectures: []specs.Arch{arch},
		Syscalls: []specs.LinuxSyscall{
			{Names: denied, Action: specs.ActErrno, ErrnoRet: &eperm},
			{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
		},
	}
	if !allowUserns {
		newUser := uint64(unix.CLONE_NEWUSER)
		f.Syscalls = append(f.Syscalls,
			specs.LinuxSyscall{Names: mountCalls, Action: specs.ActErrno, ErrnoRet: &eperm},
			specs.LinuxSyscall{Names: []string{"unshare", "clone"}, Action: specs.ActErrno, ErrnoRet: &eperm,
				Args: []specs.LinuxSeccompArg{{Index: 0, Value: newUser, ValueTwo: newUser, Op: specs.OpMaskedEqual}}})
	}
	return f
}
