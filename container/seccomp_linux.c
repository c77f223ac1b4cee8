// cshell's syscall filter, installed by PID 1 (pid1_linux.c) right before
// it forks the command, so that the command and everything it starts run
// under it. The programs below are static: built once with the binary
// from this architecture's own system call numbers (the kernel headers'
// __NR_ constants), never assembled at a start. Modelled on Docker's
// default profile (moby/profiles): what a process without capabilities
// could still reach of the kernel's riskier surface is refused with EPERM
// (ENOSYS where libc falls back: clone3), never with a kill.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "seccomp_linux.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "cshell's syscall filter knows x86_64 and aarch64"
#endif

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define FAIL(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
// DENY answers EPERM to one system call; IF_DENY skips it where the
// architecture has no such call.
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), FAIL(EPERM)
// FLAGGED gives call nr the verdict v when its first argument (the flags
// of clone and unshare; its low 32 bits, little-endian) has bit set.
#define FLAGGED(nr, bit, v)                                         \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4),            \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (bit), 0, 1),          \
	BPF_STMT(BPF_RET | BPF_K, (v)), ALLOW
// ASK hands the call over (seccomp user notification): to PID 1, which
// answers EPERM and tells cshell, so that the shell's output can say which
// flag would allow it; or, with the egress, to cshell itself, which also
// makes the shell's outbound connections. REFUSE answers EPERM at once.
#define ASK SECCOMP_RET_USER_NOTIF
#define REFUSE (SECCOMP_RET_ERRNO | EPERM)

// The head of both programs: a foreign ABI (i386 or x32 calls on x86_64)
// gets ENOSYS for everything, since the numbers below are the native
// ABI's; then the call's number is loaded.
#ifdef __x86_64__
#define HEAD                                                           \
	LOAD(arch), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0), FAIL(ENOSYS), \
	LOAD(nr), BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1), FAIL(ENOSYS)
#else
#define HEAD LOAD(arch), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0), FAIL(ENOSYS), LOAD(nr)
#endif

// USERNS refuses new user namespaces (verdict v): unshare and clone with
// CLONE_NEWUSER, and clone3, whose flags sit in memory a filter cannot
// read (glibc then falls back to clone).
#define USERNS(v)                                                      \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1), FAIL(ENOSYS), \
	FLAGGED(__NR_unshare, CLONE_NEWUSER, v), FLAGGED(__NR_clone, CLONE_NEWUSER, v)

// The calls refused in every shell. A capability-less process would be
// refused most of them by the kernel anyway; the filter refuses them
// before any of their code runs (and io_uring, bpf, keyctl, userfaultfd
// and perf_event_open need no capability at all).
#define DENIED                                                                   \
	DENY(__NR_io_uring_setup), DENY(__NR_io_uring_enter), DENY(__NR_io_uring_register), \
	DENY(__NR_keyctl), DENY(__NR_add_key), DENY(__NR_request_key),           \
	DENY(__NR_bpf), DENY(__NR_perf_event_open), DENY(__NR_userfaultfd),       \
	DENY(__NR_kexec_load), DENY(__NR_kexec_file_load),                        \
	DENY(__NR_init_module), DENY(__NR_finit_module), DENY(__NR_delete_module), \
	DENY(__NR_swapon), DENY(__NR_swapoff), DENY(__NR_reboot),                 \
	DENY(__NR_clock_settime), DENY(__NR_clock_adjtime), DENY(__NR_settimeofday), \
	DENY(__NR_acct), DENY(__NR_quotactl), DENY(__NR_lookup_dcookie),          \
	DENY(__NR_open_by_handle_at), DENY(__NR_name_to_handle_at),               \
	DENY(__NR_kcmp), DENY(__NR_vhangup), DENY(__NR_syslog), DENY(__NR_nfsservctl), \
	EXTRA_DENIED

// MOUNTS refuses what a process can do only over namespaces it owns:
// mount and its new API, pivot_root, setns. A shell owns none (no
// capability anywhere), unless it may make user namespaces: then these are
// what a sandbox of its own (bubblewrap, rootless podman) is built with.
#define MOUNTS                                                                   \
	DENY(__NR_mount), DENY(__NR_umount2), DENY(__NR_pivot_root),              \
	DENY(__NR_fsopen), DENY(__NR_fsconfig), DENY(__NR_fsmount), DENY(__NR_fspick), \
	DENY(__NR_open_tree), DENY(__NR_move_mount), DENY(__NR_mount_setattr),    \
	DENY(__NR_setns)

#ifdef __x86_64__
// Calls only x86_64 has.
#define EXTRA_DENIED                                                       \
	DENY(__NR_ioperm), DENY(__NR_iopl), DENY(__NR_create_module),            \
	DENY(__NR_get_kernel_syms), DENY(__NR_query_module), DENY(__NR_uselib),  \
	DENY(__NR_ustat), DENY(__NR_sysfs), DENY(__NR__sysctl), DENY(__NR_quotactl_fd)
#else
#define EXTRA_DENIED DENY(__NR_quotactl_fd)
#endif

// CONNECTS hands a connect whose address is as long as an IPv4 (16
// bytes) or IPv6 (28) one to cshell's egress (sandbox/egress_linux.go):
// the shell's network namespace has no route out, so cshell makes the
// connection for it, by the allowlist. A filter cannot read the address
// itself (it sits in memory), but every other length (unix sockets, an
// address passed with a longer length) needs nothing: it connects to what
// the namespace holds, which is never outside.
#define CONNECTS                                                             \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_connect, 0, 5),             \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 16, 2, 0),                       \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 28, 1, 0),                       \
	ALLOW, BPF_STMT(BPF_RET | BPF_K, ASK)

// ARGFLAG gives call nr the error e when its argument i has bit set.
#define ARGFLAG(nr, i, bit, e)                                        \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 4),              \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i])), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (bit), 0, 1),            \
	FAIL(e), ALLOW

// NOFASTOPEN: a TCP fast open send connects without connect(), so cshell
// could not make it; it fails as on a kernel with fast open turned off
// (EOPNOTSUPP), and clients fall back to connect.
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#define NOFASTOPEN ARGFLAG(__NR_sendto, 3, MSG_FASTOPEN, EOPNOTSUPP), ARGFLAG(__NR_sendmsg, 2, MSG_FASTOPEN, EOPNOTSUPP)

static struct sock_filter strict[] = { HEAD, USERNS(ASK), DENIED, MOUNTS, ALLOW };
static struct sock_filter strict_egress[] = { HEAD, USERNS(ASK), DENIED, MOUNTS, CONNECTS, NOFASTOPEN, ALLOW };
static struct sock_filter strict_quiet[] = { HEAD, USERNS(REFUSE), DENIED, MOUNTS, ALLOW };
static struct sock_filter nested[] = { HEAD, DENIED, ALLOW };
static struct sock_filter nested_egress[] = { HEAD, DENIED, CONNECTS, NOFASTOPEN, ALLOW };

#define PROG(p) { .len = sizeof(p) / sizeof((p)[0]), .filter = (p) }

int cshell_seccomp(int allow_userns, int egress)
{
	struct sock_fprog s = PROG(strict), se = PROG(strict_egress), q = PROG(strict_quiet),
			  n = PROG(nested), ne = PROG(nested_egress);
	int fd;

	// runc set no_new_privs; without it the kernel refuses a filter from a
	// process without CAP_SYS_ADMIN, which is what a shell is.
	if (allow_userns && !egress)
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &n) < 0 ? -1 : -2;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
		     allow_userns ? &ne : egress ? &se : &s);
	if (fd >= 0 || (errno != EINVAL && errno != ENOSYS))
		return fd;
	// A kernel without user notification (before 5.0): refuse quietly,
	// and make no connection for the shell.
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, allow_userns ? &n : &q) < 0 ? -1 : -2;
}

int cshell_answer(int listener)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;

	memset(&req, 0, sizeof(req));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
		return -1;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.error = -EPERM;
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0)
		return -1; // the caller is gone (killed meanwhile)
	return req.data.nr;
}
