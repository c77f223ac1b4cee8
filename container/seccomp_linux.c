// cshell's syscall filter, installed by PID 1 (pid1_linux.c) right before
// it forks the command, so that the command and everything it starts run
// under it. An allowlist modelled on Docker's default profile
// (moby/profiles): the calls a process without capabilities may make there
// are allowed (seccomp_allow_linux.h), a few of them only with the
// arguments Docker allows; what cshell refuses on purpose fails with EPERM,
// and any other call, one a future kernel adds among them, with ENOSYS, so
// that libc falls back as on an older kernel. Nothing is killed.
//
// The pieces are static, built once with the binary from this
// architecture's own system call numbers (the kernel headers' __NR_
// constants, and the numbers below for calls newer than them); a start
// puts the pieces its shell needs together: those whose arguments decide
// one after the other, the plain ones as ranges of call numbers (build).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

// Calls newer than the kernel headers of an older build machine; since
// 5.1 both architectures share these numbers.
#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_futex_wake
#define __NR_futex_wake 454
#endif
#ifndef __NR_futex_wait
#define __NR_futex_wait 455
#endif
#ifndef __NR_futex_requeue
#define __NR_futex_requeue 456
#endif
#ifndef __NR_statmount
#define __NR_statmount 457
#endif
#ifndef __NR_listmount
#define __NR_listmount 458
#endif
#ifndef __NR_mseal
#define __NR_mseal 462
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_getxattrat
#define __NR_getxattrat 464
#endif
#ifndef __NR_listxattrat
#define __NR_listxattrat 465
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif
#if defined(__x86_64__) && !defined(__NR_map_shadow_stack)
#define __NR_map_shadow_stack 453
#endif

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
// O_TMPFILE's own bit: glibc's __O_TMPFILE and O_TMPFILE carry
// O_DIRECTORY with it, which every directory listing sets.
#define TMPFILE_BIT 020000000

#define LOAD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
// ARG loads the low 32 bits of argument i (little-endian).
#define ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define FAIL(e) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((e) & SECCOMP_RET_DATA))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IS(nr, skip) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, (skip))
// ALLOW_NR allows one call; DENY answers EPERM to one, NOSYS ENOSYS.
#define ALLOW_NR(nr) IS(nr, 1), ALLOW
#define DENY(nr) IS(nr, 1), FAIL(EPERM)
#define NOSYS(nr) IS(nr, 1), FAIL(ENOSYS)

// ASK hands the call over (seccomp user notification): to PID 1, which
// answers EPERM and tells cshell, so that the shell's output can say which
// flag would allow it; or, with the egress, to cshell itself, which also
// hears of opens with write intent. REFUSE answers EPERM at once.
#define ASK SECCOMP_RET_USER_NOTIF
#define REFUSE (SECCOMP_RET_ERRNO | EPERM)

// The head: a foreign ABI (i386 or x32 calls on x86_64) gets ENOSYS for
// everything, since the numbers below are the native ABI's; then the
// call's number is loaded, and stays loaded between the rules (each rule
// that loads an argument ends in a verdict).
#ifdef __x86_64__
#define X32 BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1), FAIL(ENOSYS)
#else
#define X32 ALLOW_NR(-1) /* no such call: a no-op of the same length */
#endif
static const struct sock_filter head[] = {
	LOAD(arch), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 1, 0), FAIL(ENOSYS),
	LOAD(nr), X32,
};

// No privilege leaves a shell: a file it makes or changes never gains the
// setuid or setgid bit, which would count on the host for whoever runs it
// there (a shell started by root writes as the host's root). The mode is
// an argument, in a register: open and openat when they create (O_CREAT,
// O_TMPFILE), creat, mknod and mknodat always, and the chmod calls.
// openat2 passes its mode in memory, where a filter cannot look: it gets
// ENOSYS, and libc falls back to openat.
#define SETID (S_ISUID | S_ISGID)
// CREATES(nr, f, m, v): call nr creating (flags in argument f) with mode
// m gets the return value v for a setuid or setgid mode.
#define CREATES(nr, f, m, v) \
	IS(nr, 6), ARG(f), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | TMPFILE_BIT, 0, 3), \
	ARG(m), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID, 0, 1), RET(v), ALLOW
// MODE(nr, m, v): call nr setting the mode in argument m.
#define MODE(nr, m, v) \
	IS(nr, 4), ARG(m), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID, 0, 1), RET(v), ALLOW
// MODES(v): the rules, with return value v for a setuid or setgid mode:
// REFUSE (EPERM at once), or ASK where cshell holds the filter's listener:
// handed over to be refused there and told (container/calls_linux.go,
// refusedCall), so that the shell's output names the refusal.
#ifdef __NR_open
#define OPEN_MODE(v) CREATES(__NR_open, 1, 2, v),
#else
#define OPEN_MODE(v)
#endif
#ifdef __NR_creat
#define CREAT_MODE(v) MODE(__NR_creat, 1, v),
#else
#define CREAT_MODE(v)
#endif
#ifdef __NR_chmod
#define CHMOD_MODE(v) MODE(__NR_chmod, 1, v),
#else
#define CHMOD_MODE(v)
#endif
#ifdef __NR_mknod
#define MKNOD_MODE(v) MODE(__NR_mknod, 1, v),
#else
#define MKNOD_MODE(v)
#endif
#define MODES(v) \
	CREATES(__NR_openat, 2, 3, v), /* the hot one first: it runs the program at every open */ \
	OPEN_MODE(v) CREAT_MODE(v) CHMOD_MODE(v) \
	MODE(__NR_fchmod, 1, v), MODE(__NR_fchmodat, 2, v), MODE(__NR_fchmodat2, 2, v), \
	MKNOD_MODE(v) MODE(__NR_mknodat, 2, v), \
	NOSYS(__NR_openat2)
static const struct sock_filter modes[] = { MODES(REFUSE) };
static const struct sock_filter modes_told[] = { MODES(ASK) };

// Refused writes are told (a write to a read-only or hidden path shows in
// the shell's output with the flag that would allow it): where cshell
// holds the filter's listener (the egress's "G"), the opens with write
// intent are handed over too. cshell lets each go on at once and judges
// afterwards; the kernel alone decides the call. One that creates with a
// setuid or setgid mode is handed over to be refused, as in modes_told.
#define WRITES (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | TMPFILE_BIT)
#define CREATES_TOLD(nr, f, m) \
	IS(nr, 9), ARG(f), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, O_CREAT | TMPFILE_BIT, 0, 3), \
	ARG(m), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, SETID, 0, 1), RET(ASK), \
	ARG(f), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITES, 0, 1), RET(ASK), ALLOW
#define MODE_TOLD(nr, m) IS(nr, 1), RET(ASK)
static const struct sock_filter opens_told[] = {
	CREATES_TOLD(__NR_openat, 2, 3),
#ifdef __NR_open
	CREATES_TOLD(__NR_open, 1, 2),
#endif
#ifdef __NR_creat
	MODE_TOLD(__NR_creat, 1),
#endif
};

// socket: the families Docker's default profile allows (AF_UNIX, AF_INET,
// AF_INET6, AF_NETLINK and the others listed); any other, AF_VSOCK among
// them (a way to the hypervisor that no network namespace covers), gets
// EAFNOSUPPORT, as on a kernel without it.
static const struct sock_filter sockets[] = {
	IS(__NR_socket, 33), ARG(0),
	// below 3: AF_UNSPEC, AF_UNIX, AF_INET; then one test a family,
	// each jumping to the ALLOW at the end (jt counts what lies between).
	BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 3, 0, 29),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 7, 28, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 8, 27, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 9, 26, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 10, 25, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 13, 24, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 14, 23, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 15, 22, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 16, 21, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 20, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 18, 19, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 21, 18, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 22, 17, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 24, 16, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 26, 15, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 27, 14, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 28, 13, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 29, 12, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 30, 11, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 31, 10, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 32, 9, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 33, 8, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 35, 7, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 36, 6, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 39, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 41, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 42, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 43, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 44, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 45, 0, 1),
	ALLOW, FAIL(EAFNOSUPPORT),
};

// personality: the personas Docker allows (Linux, PER_LINUX32, UNAME26,
// and the query 0xffffffff), and beyond Docker's list ADDR_NO_RANDOMIZE
// alone or with PER_LINUX32 (gdb and `setarch -R` ask for it; it weakens
// only the caller's own address layout); READ_IMPLIES_EXEC and the rest
// get EPERM.
static const struct sock_filter personas[] = {
	IS(__NR_personality, 10), ARG(0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0, 6, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20000, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x20008, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40000, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40008, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffff, 0, 1),
	ALLOW, FAIL(EPERM),
};

// The namespace flags of clone and unshare, but for CLONE_NEWUSER (Docker's
// mask without it): what only a process with capabilities may ask for.
#define NEW_NS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWNET)

// A shell makes no namespace of its own: clone and unshare asking for a
// user namespace get the verdict v (told, at the first one), any other
// namespace EPERM; clone3, whose flags sit in memory, ENOSYS (libc falls
// back to clone).
#define NS_RULE(nr, v) \
	IS(nr, 6), ARG(0), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1), RET(v), \
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NEW_NS, 0, 1), FAIL(EPERM), ALLOW
static const struct sock_filter ns_ask[] = { NOSYS(__NR_clone3), NS_RULE(__NR_clone, ASK), NS_RULE(__NR_unshare, ASK) };
static const struct sock_filter ns_quiet[] = { NOSYS(__NR_clone3), NS_RULE(__NR_clone, REFUSE), NS_RULE(__NR_unshare, REFUSE) };
// With --allow-userns, namespaces of its own, and what a sandbox of its
// own is built with (they act only over namespaces the shell owns).
static const struct sock_filter ns_nested[] = {
	ALLOW_NR(__NR_clone3), ALLOW_NR(__NR_clone), ALLOW_NR(__NR_unshare), ALLOW_NR(__NR_setns),
	ALLOW_NR(__NR_mount), ALLOW_NR(__NR_umount2), ALLOW_NR(__NR_pivot_root), ALLOW_NR(__NR_chroot),
	ALLOW_NR(__NR_fsopen), ALLOW_NR(__NR_fsconfig), ALLOW_NR(__NR_fsmount), ALLOW_NR(__NR_fspick),
	ALLOW_NR(__NR_open_tree), ALLOW_NR(__NR_move_mount), ALLOW_NR(__NR_mount_setattr),
	ALLOW_NR(__NR_sethostname), ALLOW_NR(__NR_setdomainname),
};

// A file capability set in a shell started by root counts on the host: in
// a user namespace of its own (--allow-userns) the shell may write
// security.capability on the files of the host's root. The xattr's name
// sits in memory, where a filter cannot look: such a shell sets no
// extended attribute at all.
static const struct sock_filter no_xattr[] = {
	DENY(__NR_setxattr), DENY(__NR_lsetxattr), DENY(__NR_fsetxattr), DENY(__NR_setxattrat),
};
// The same, handed over to be refused and told where cshell holds the
// listener.
#define ASK_NR(nr) IS(nr, 1), RET(ASK)
static const struct sock_filter no_xattr_told[] = {
	ASK_NR(__NR_setxattr), ASK_NR(__NR_lsetxattr), ASK_NR(__NR_fsetxattr), ASK_NR(__NR_setxattrat),
};
static const struct sock_filter xattr[] = {
	ALLOW_NR(__NR_setxattr), ALLOW_NR(__NR_lsetxattr), ALLOW_NR(__NR_fsetxattr), ALLOW_NR(__NR_setxattrat),
};

// Connects go on as asked: what would leave the shell's network namespace
// is sent to cshell's egress by the namespace's own rules
// (container/redirect_linux.go), which cost a connection inside loopback
// nothing.
static const struct sock_filter direct[] = {
	ALLOW_NR(__NR_connect), ALLOW_NR(__NR_sendto), ALLOW_NR(__NR_sendmsg),
};

// What cshell refuses on purpose (EPERM), also where Docker's profile
// allows it to a process with the capability it names: kernel surface a
// process without capabilities would still reach (io_uring, bpf, keyctl,
// userfaultfd and perf_event_open need none), and calls only capabilities
// make useful.
static const struct sock_filter denied[] = {
	DENY(__NR_io_uring_setup), DENY(__NR_io_uring_enter), DENY(__NR_io_uring_register),
	DENY(__NR_keyctl), DENY(__NR_add_key), DENY(__NR_request_key),
	DENY(__NR_bpf), DENY(__NR_perf_event_open), DENY(__NR_userfaultfd),
	DENY(__NR_kexec_load), DENY(__NR_kexec_file_load),
	DENY(__NR_init_module), DENY(__NR_finit_module), DENY(__NR_delete_module),
	DENY(__NR_swapon), DENY(__NR_swapoff), DENY(__NR_reboot),
	DENY(__NR_clock_settime), DENY(__NR_clock_adjtime), DENY(__NR_settimeofday),
	DENY(__NR_acct), DENY(__NR_quotactl), DENY(__NR_quotactl_fd), DENY(__NR_lookup_dcookie),
	DENY(__NR_open_by_handle_at), DENY(__NR_name_to_handle_at),
	DENY(__NR_kcmp), DENY(__NR_vhangup), DENY(__NR_syslog), DENY(__NR_nfsservctl),
	DENY(__NR_pidfd_getfd), DENY(__NR_process_madvise),
	DENY(__NR_get_mempolicy), DENY(__NR_set_mempolicy), DENY(__NR_mbind),
	DENY(__NR_migrate_pages), DENY(__NR_move_pages), DENY(__NR_fanotify_init),
#ifdef __NR_set_mempolicy_home_node
	DENY(__NR_set_mempolicy_home_node),
#endif
#ifdef __x86_64__
	DENY(__NR_ioperm), DENY(__NR_iopl), DENY(__NR_create_module),
	DENY(__NR_get_kernel_syms), DENY(__NR_query_module), DENY(__NR_uselib),
	DENY(__NR_ustat), DENY(__NR_sysfs), DENY(__NR__sysctl),
#endif
};

// What only a shell with user namespaces of its own may do (ns_nested):
// EPERM for the others.
static const struct sock_filter mounts[] = {
	DENY(__NR_mount), DENY(__NR_umount2), DENY(__NR_pivot_root), DENY(__NR_chroot),
	DENY(__NR_fsopen), DENY(__NR_fsconfig), DENY(__NR_fsmount), DENY(__NR_fspick),
	DENY(__NR_open_tree), DENY(__NR_move_mount), DENY(__NR_mount_setattr),
	DENY(__NR_setns), DENY(__NR_sethostname), DENY(__NR_setdomainname),
};

// The allowlist; every call left gets ENOSYS.
static const struct sock_filter allowed[] = {
#include "seccomp_allow_linux.h"
};

_Static_assert(sizeof(sockets) / sizeof(sockets[0]) == 34, "the socket rule's jump counts assume 34 instructions");
_Static_assert(sizeof(personas) / sizeof(personas[0]) == 11, "the personality rule's jump counts assume 11 instructions");

#define MAX_PROG 2048
// Calls are numbered below this on both architectures (466 is the highest
// in 6.18); a piece naming one past it is refused, as is any call there.
#define MAX_NR 1024

static struct sock_filter prog[MAX_PROG];
static unsigned short prog_len;

static void put(const struct sock_filter *p, size_t n)
{
	memcpy(prog + prog_len, p, n * sizeof(*p));
	prog_len += n;
}
#define PUT(p) put((p), sizeof(p) / sizeof((p)[0]))

// The verdicts of the plain pieces (a verdict for a call whatever its
// arguments: IS(nr, 1) then a return, pair after pair), by call number;
// the first piece to name a call decides, as in a list of such pairs.
static unsigned verdict[MAX_NR];
static unsigned char decided[MAX_NR];

static int note(const struct sock_filter *p, size_t n)
{
	if (n % 2)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		if (p[i].code != (BPF_JMP | BPF_JEQ | BPF_K) || p[i].jt != 0 || p[i].jf != 1 ||
		    p[i + 1].code != (BPF_RET | BPF_K) || p[i].k >= MAX_NR)
			return -1;
		if (!decided[p[i].k]) {
			verdict[p[i].k] = p[i + 1].k;
			decided[p[i].k] = 1;
		}
	}
	return 0;
}
#define NOTE(p) note((p), sizeof(p) / sizeof((p)[0]))

// put_verdicts ends the program with the plain pieces' verdicts as ranges
// of call numbers, ENOSYS for every call none names: two instructions a
// range, where the pairs took two a call. The kernel's time to take a
// filter (its checks, the translation and the JIT) grows with its length,
// and every shell's PID 1 pays it before the command starts; calls with a
// verdict of ALLOW whatever their arguments never run the program at all
// (the kernel caches them), so their order costs nothing once it runs.
static int put_verdicts(void)
{
	unsigned nr = 0, cur, v;

	while (nr < MAX_NR) {
		cur = decided[nr] ? verdict[nr] : (unsigned)(SECCOMP_RET_ERRNO | ENOSYS);
		while (nr + 1 < MAX_NR && (decided[nr + 1] ? verdict[nr + 1] : (unsigned)(SECCOMP_RET_ERRNO | ENOSYS)) == cur)
			nr++;
		if (prog_len + 3 > MAX_PROG)
			return -1;
		// A > nr: on to the next range; else this range's verdict.
		prog[prog_len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, nr, 1, 0);
		prog[prog_len++] = (struct sock_filter)RET(cur);
		nr++;
	}
	v = SECCOMP_RET_ERRNO | ENOSYS;
	prog[prog_len++] = (struct sock_filter)RET(v);
	return 0;
}

// build puts the program of a shell together: the pieces whose arguments
// decide, then the plain ones as ranges (put_verdicts). No call is in
// both kinds, so the order between them decides nothing
// (TestFilterCompaction holds this against the pieces one after the
// other: linear).
static int build(int allow_userns, int egress_on, int quiet, int root, int tell_writes, int linear)
{
	prog_len = 0;
	memset(decided, 0, sizeof(decided));
	PUT(head);
	if (egress_on && tell_writes)
		PUT(opens_told); // before modes: the first rule for a call decides
	if (egress_on)
		PUT(modes_told);
	else
		PUT(modes);
#define PLAIN(p)                     \
	do {                         \
		if (linear)          \
			PUT(p);      \
		else if (NOTE(p) < 0) \
			return -1;   \
	} while (0)
	PLAIN(direct);
	PUT(sockets);
	PUT(personas);
	if (allow_userns)
		PLAIN(ns_nested);
	else if (quiet)
		PUT(ns_quiet);
	else
		PUT(ns_ask);
	if (allow_userns && root && egress_on)
		PLAIN(no_xattr_told);
	else if (allow_userns && root)
		PLAIN(no_xattr);
	else
		PLAIN(xattr);
	PLAIN(denied);
	if (!allow_userns)
		PLAIN(mounts);
	PLAIN(allowed);
#undef PLAIN
	if (linear) {
		prog[prog_len++] = (struct sock_filter)FAIL(ENOSYS);
		return 0;
	}
	return put_verdicts();
}

_Static_assert(sizeof(head) + sizeof(opens_told) + sizeof(modes_told) + sizeof(direct) + sizeof(sockets) + sizeof(personas) +
		       sizeof(ns_nested) + sizeof(ns_ask) + sizeof(no_xattr) + sizeof(xattr) + sizeof(denied) + sizeof(mounts) +
		       sizeof(allowed) + sizeof(struct sock_filter) <= MAX_PROG * sizeof(struct sock_filter),
	       "the filter fits its buffer");

int cshell_filter_program(int allow_userns, int egress_on, int quiet, int root, int tell_writes, int linear,
			  struct sock_filter *out, int max)
{
	if (build(allow_userns, egress_on, quiet, root, tell_writes, linear) < 0 || prog_len > max)
		return -1;
	memcpy(out, prog, prog_len * sizeof(*prog));
	return prog_len;
}

int cshell_seccomp(int allow_userns, int egress_on, int root, int tell_writes)
{
	struct sock_fprog p = { .filter = prog };
	int fd;

	// runc set no_new_privs; without it the kernel refuses a filter from a
	// process without CAP_SYS_ADMIN, which is what a shell is.
	if (build(allow_userns, egress_on, 0, root, tell_writes, 0) < 0) {
		errno = EINVAL;
		return -1;
	}
	p.len = prog_len;
	if (allow_userns && !egress_on)
		return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p) < 0 ? -1 : -2;
	fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p);
	if (fd >= 0 || (errno != EINVAL && errno != ENOSYS))
		return fd;
	// A kernel without user notification (before 5.0): refuse quietly,
	// and tell nothing.
	if (build(allow_userns, 0, 1, root, 0, 0) < 0) {
		errno = EINVAL;
		return -1;
	}
	p.len = prog_len;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p) < 0 ? -1 : -2;
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
