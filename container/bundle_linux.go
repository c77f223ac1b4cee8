package container

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
	sp, _, _, err := r.spec(s)
	if err != nil {
		return err
	}
	// The oldest version that states all of it: runtimes refuse versions
	// newer than they know (crun 1.8 knows 1.0 and 1.1 only).
	sp.Version = "1.0.2"
	// Absolute, which runc and crun take as well as a relative one:
	// containerd's ctr run --config makes a bundle directory of its own,
	// where a relative path finds nothing.
	sp.Root.Path = r.rootfs
	sp.Process.Args = s.args(hostLookPath)
	sp.Process.Terminal = false
	sp.Mounts = slices.DeleteFunc(sp.Mounts, func(m specs.Mount) bool {
		// Not cshell's PID 1; and rootless, no host directory this user
		// cannot search (/root): the shell could not look in it either,
		// and crun fails on it (it reopens each bind to make it read-only).
		return m.Destination == initPath ||
			os.Geteuid() != 0 && m.Type == "bind" && m.Source == m.Destination && filepath.Dir(m.Source) == "/" && unix.Access(m.Source, unix.X_OK) != nil
	})
	sp.Linux.Seccomp = ociFilter(s.AllowUserNamespaces, os.Geteuid() == 0)
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

// The calls of cshell's filter (seccomp_linux.c), by name, for the OCI
// form of it: a test holds these lists and the C program's pieces to the
// same calls, and the allowlist to Docker's default profile.
var (
	// deniedCalls are refused (EPERM) in every shell: the C program's
	// denied.
	deniedCalls = []string{
		"io_uring_setup", "io_uring_enter", "io_uring_register",
		"keyctl", "add_key", "request_key",
		"bpf", "perf_event_open", "userfaultfd",
		"kexec_load", "kexec_file_load",
		"init_module", "finit_module", "delete_module",
		"swapon", "swapoff", "reboot",
		"clock_settime", "clock_adjtime", "settimeofday",
		"acct", "quotactl", "quotactl_fd", "lookup_dcookie",
		"open_by_handle_at", "name_to_handle_at",
		"kcmp", "vhangup", "syslog", "nfsservctl",
		"pidfd_getfd", "process_madvise",
		"get_mempolicy", "set_mempolicy", "mbind",
		"migrate_pages", "move_pages", "fanotify_init",
		"set_mempolicy_home_node",
	}
	// x86Calls are refused too where the architecture has them.
	x86Calls = []string{"ioperm", "iopl", "create_module", "get_kernel_syms", "query_module", "uselib", "ustat", "sysfs", "_sysctl"}
	// mountCalls are refused unless the shell may make user namespaces:
	// the C program's mounts, which ns_nested allows.
	mountCalls = []string{
		"mount", "umount2", "pivot_root", "chroot",
		"fsopen", "fsconfig", "fsmount", "fspick",
		"open_tree", "move_mount", "mount_setattr",
		"setns", "sethostname", "setdomainname",
	}
	// xattrCalls are refused in a shell of the host's root with user
	// namespaces of its own: no_xattr.
	xattrCalls = []string{"setxattr", "lsetxattr", "fsetxattr", "setxattrat"}
	// modeCalls set a file's mode in argument Mode (creating, for those
	// with Flags, when O_CREAT or O_TMPFILE is in argument Flags): never
	// with the setuid or setgid bit (modes).
	modeCalls = []struct {
		Name        string
		Flags, Mode uint
	}{
		{"openat", 2, 3}, {"open", 1, 2}, {"creat", 0, 1}, {"chmod", 0, 1}, {"fchmod", 0, 1},
		{"fchmodat", 0, 2}, {"fchmodat2", 0, 2}, {"mknod", 0, 1}, {"mknodat", 0, 2},
	}
	// socketFamilies may be made (sockets): Docker's list, beyond the
	// families below 3 (AF_UNSPEC, AF_UNIX, AF_INET).
	socketFamilies = []uint64{7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 21, 22, 24, 26, 27, 28, 29, 30, 31, 32, 33, 35, 36, 39, 41, 42, 43, 44, 45}
	// lastFamily is one past the socket families: what the C program
	// refuses from on (its last test, 45).
	lastFamily = uint64(46)
	// personas may be asked of personality (personas).
	personas = []uint64{0x0, 0x8, 0x20000, 0x20008, 0x40000, 0x40008, 0xffffffff}
)

//go:embed seccomp_allow_linux.h
var allowHeader string

// allowedCalls are the calls of the allowlist (seccomp_allow_linux.h).
func allowedCalls() []string {
	var out []string
	for _, m := range regexp.MustCompile(`ALLOW_NR\(__NR_(\w+)\)`).FindAllStringSubmatch(allowHeader, -1) {
		out = append(out, m[1])
	}
	return out
}

// ociFilter is cshell's syscall filter as an OCI runtime spec states it
// (what runc, crun and containerd build with libseccomp): the allowlist,
// the same argument rules, EPERM for the refused calls and, as in
// Docker's default profile, for every other call (the C program answers a
// call it does not know with ENOSYS; an OCI filter has no "else" for a
// call with argument rules, so socket families refused are listed one by
// one, with EAFNOSUPPORT as the C program answers them). Foreign ABIs (i386 and x32 on x86_64) are left to the runtime,
// which refuses architectures not listed.
func ociFilter(allowUserns, root bool) *specs.LinuxSeccomp {
	eperm, enosys := uint(unix.EPERM), uint(unix.ENOSYS)
	arch := specs.ArchX86_64
	denied := slices.Clone(deniedCalls)
	if runtime.GOARCH == "arm64" {
		arch = specs.ArchAARCH64
	} else {
		denied = append(denied, x86Calls...)
	}
	allow := append(allowedCalls(), "connect", "sendto", "sendmsg")
	f := &specs.LinuxSeccomp{
		DefaultAction: specs.ActErrno,
		Architectures: []specs.Arch{arch},
		Syscalls: []specs.LinuxSyscall{
			{Names: denied, Action: specs.ActErrno, ErrnoRet: &eperm},
			{Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &enosys},
		},
	}
	rule := func(name string, args ...specs.LinuxSeccompArg) {
		f.Syscalls = append(f.Syscalls, specs.LinuxSyscall{Names: []string{name}, Action: specs.ActAllow, Args: args})
	}
	masked := func(i uint, mask, value uint64) specs.LinuxSeccompArg {
		return specs.LinuxSeccompArg{Index: i, Value: mask, ValueTwo: value, Op: specs.OpMaskedEqual}
	}
	setid := uint64(unix.S_ISUID | unix.S_ISGID)
	for _, c := range modeCalls {
		rule(c.Name, masked(c.Mode, setid, 0))
		if c.Flags != 0 {
			rule(c.Name, masked(c.Flags, uint64(unix.O_CREAT|unix.O_TMPFILE&^unix.O_DIRECTORY), 0))
		}
	}
	rule("socket", specs.LinuxSeccompArg{Index: 0, Value: 3, Op: specs.OpLessThan})
	for _, fam := range socketFamilies {
		rule("socket", specs.LinuxSeccompArg{Index: 0, Value: fam, Op: specs.OpEqualTo})
	}
	// The families refused get EAFNOSUPPORT, as from the C program (and
	// a kernel without them): each one below the last family Linux has,
	// and every number past it.
	eafnosupport := uint(unix.EAFNOSUPPORT)
	refuse := func(arg specs.LinuxSeccompArg) {
		f.Syscalls = append(f.Syscalls, specs.LinuxSyscall{Names: []string{"socket"}, Action: specs.ActErrno, ErrnoRet: &eafnosupport, Args: []specs.LinuxSeccompArg{arg}})
	}
	for fam := uint64(3); fam < lastFamily; fam++ {
		if !slices.Contains(socketFamilies, fam) {
			refuse(specs.LinuxSeccompArg{Index: 0, Value: fam, Op: specs.OpEqualTo})
		}
	}
	refuse(specs.LinuxSeccompArg{Index: 0, Value: lastFamily, Op: specs.OpGreaterEqual})
	for _, p := range personas {
		rule("personality", specs.LinuxSeccompArg{Index: 0, Value: p, Op: specs.OpEqualTo})
	}
	if allowUserns {
		allow = append(append(allow, "clone", "clone3", "unshare"), mountCalls...)
	} else {
		f.Syscalls = append(f.Syscalls, specs.LinuxSyscall{Names: []string{"clone3"}, Action: specs.ActErrno, ErrnoRet: &enosys},
			specs.LinuxSyscall{Names: mountCalls, Action: specs.ActErrno, ErrnoRet: &eperm})
		ns := uint64(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWPID | unix.CLONE_NEWNET)
		rule("clone", masked(0, ns, 0))
		rule("unshare", masked(0, ns, 0))
	}
	if allowUserns && root {
		f.Syscalls = append(f.Syscalls, specs.LinuxSyscall{Names: xattrCalls, Action: specs.ActErrno, ErrnoRet: &eperm})
	} else {
		allow = append(allow, xattrCalls...)
	}
	f.Syscalls = append([]specs.LinuxSyscall{{Names: allow, Action: specs.ActAllow}}, f.Syscalls...)
	return f
}
