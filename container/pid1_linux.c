// The container's PID 1, in C: it runs before the Go runtime starts (an
// ELF constructor, as libcontainer's nsexec does), so a shell pays no Go
// start-up for its init. Selected by the argument "__pid1"; see pid1 in
// init_linux.go for the contract it keeps.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "seccomp_linux.h"

static int status_code(int ws)
{
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return WEXITSTATUS(ws);
}

// The socket factory: fd 3, when it is a unix socket, takes requests of two
// bytes (kind: '4' or '6' for TCP over IPv4 or IPv6, 'u' or 'v' for UDP;
// count: 1 to MAX_BATCH) and answers each with one status byte (0, or an
// errno) carrying that many new, unconnected sockets made here, inside the
// shell's network namespace. A socket keeps the namespace it was made in,
// so the supervisor connects, binds and listens with them on the host
// side (see netrelay). The command starts only at the request "g"
// (answered with status 0 and no socket), so that listeners inside (the
// proxy, the session's ports) exist before it runs; or at "G", which also
// installs the syscall filter with the egress's calls handed over, and
// answers with its listener: cshell answers those calls from then on, PID 1
// none.
#define FACTORY_FD 3
#define MAX_BATCH 64

// A held PID 1 (--held) is made before its command is known (a warm
// sandbox): the request "c" brings the command, its working directory and
// its three streams, once, before "g" or "G".
#define MAX_COMMAND (8 << 20)
static int held;
static char **held_argv;
static char **checks; // the --check arguments, nchecks of them
static int nchecks;

static int check_mount(const char *spec);

static int allow_userns;
static int host_root; // started by the host's root (--root)
static int tell_writes = 1; // hand opens with write intent over (not --quiet-writes)
static int handed_over; // the filter is on, its listener cshell's

static int is_factory(void)
{
	struct stat st;
	return fstat(FACTORY_FD, &st) == 0 && S_ISSOCK(st.st_mode);
}

// The events pipe: fd 4, when it is a pipe (the write end); PID 1 writes
// a line there for what cshell should hear of (a refused user namespace).
#define EVENTS_FD 4

static int is_pipe(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

static int open_plain(const char *path);

// take_command reads the rest of a "c" request: a 4-byte length (host
// order), then the working directory and each word of the command, each
// ended by a NUL; streams are the descriptors that came with it, which
// become 0, 1 and 2. It returns 0 or an errno to answer; -1 ends PID 1
// (a request cshell never makes: the stream cannot be trusted after it).
static int take_command(int *streams, int nstreams)
{
	uint32_t len;
	char *buf, *p, *end;
	int words = 0, i, dir;

	char **argv;

	if (!held || held_argv || nstreams != 3)
		return -1;
	if (recv(FACTORY_FD, &len, sizeof(len), MSG_WAITALL) != sizeof(len) || len < 4 || len > MAX_COMMAND)
		return -1;
	buf = malloc(len);
	if (!buf || recv(FACTORY_FD, buf, len, MSG_WAITALL) != (ssize_t)len || buf[len - 1] != 0)
		return -1;
	for (p = buf, end = buf + len; p < end; p += strlen(p) + 1)
		words++;
	if (words < 2 || !buf[0] || !buf[strlen(buf) + 1]) {
		free(buf);
		return EINVAL; // no directory, or no program
	}
	// Every mount is checked again: made a while ago, a bind whose
	// place on the host was replaced since (a hidden file renamed over)
	// is gone from this namespace, and a cold start would bind anew.
	for (i = 0; i < nchecks; i++) {
		if (check_mount(checks[i]) < 0) {
			free(buf);
			return ESTALE;
		}
	}
	argv = calloc(words, sizeof(char *)); // words-1 arguments and the NULL
	if (!argv) {
		free(buf);
		return ENOMEM;
	}
	for (i = 0, p = buf + strlen(buf) + 1; p < end; p += strlen(p) + 1)
		argv[i++] = p;
	// The directory is looked up with no symbolic link on the way, as
	// the mounts' checks are.
	dir = open_plain(buf);
	if (dir < 0 || fchdir(dir) < 0) {
		int e = errno ? errno : ENOENT;
		if (dir >= 0)
			close(dir);
		free(argv);
		free(buf);
		return e;
	}
	close(dir);
	// Above 2 first, so that no stream lands on another's number.
	for (i = 0; i < 3; i++) {
		if (streams[i] <= 2) {
			int fd = fcntl(streams[i], F_DUPFD_CLOEXEC, 3);
			if (fd < 0)
				return -1;
			streams[i] = fd;
		}
	}
	for (i = 0; i < 3; i++) {
		if (dup2(streams[i], i) < 0)
			return -1;
	}
	for (i = 0; i < 3; i++) {
		close(streams[i]);
		streams[i] = -1;
	}
	held_argv = argv; // only now: a refused "c" leaves nothing to start
	return 0;
}

// serve_factory answers one request; it returns -1 when the peer is gone,
// 1 for "g" (start the command), else 0.
static int serve_factory(void)
{
	unsigned char req[2];
	int fds[MAX_BATCH], n = 0, family, i, in[3], nin = 0;
	unsigned char status = 0;
	char cbuf[CMSG_SPACE(sizeof(fds))], inbuf[CMSG_SPACE(sizeof(in))];
	struct iovec iov = { .iov_base = &status, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct iovec riov = { .iov_base = req, .iov_len = sizeof(req) };
	struct msghdr rmsg = { .msg_iov = &riov, .msg_iovlen = 1, .msg_control = inbuf, .msg_controllen = sizeof(inbuf) };
	struct cmsghdr *rc;
	ssize_t got = recvmsg(FACTORY_FD, &rmsg, MSG_WAITALL | MSG_CMSG_CLOEXEC);

	if (got <= 0)
		return -1;
	for (rc = CMSG_FIRSTHDR(&rmsg); rc; rc = CMSG_NXTHDR(&rmsg, rc)) {
		if (rc->cmsg_level == SOL_SOCKET && rc->cmsg_type == SCM_RIGHTS) {
			int k = (rc->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(rc) + i * sizeof(int), sizeof(int));
				if (nin < 3)
					in[nin++] = fd;
				else
					close(fd);
			}
		}
	}
	if ((rmsg.msg_flags & MSG_CTRUNC) || (nin > 0 && (got != 2 || req[0] != 'c'))) {
		for (i = 0; i < nin; i++)
			close(in[i]);
		return -1; // descriptors cshell never sends with such a request
	}
	if (got == 2 && req[0] == 'c') {
		int r = take_command(in, nin);
		for (i = 0; i < nin; i++)
			if (in[i] >= 0)
				close(in[i]);
		if (r < 0)
			return -1;
		status = r;
		n = 0;
	} else if (got == 2 && (req[0] == 'g' || req[0] == 'G') && held && !held_argv) {
		status = EINVAL; // no command yet
	} else if (got == 2 && req[0] == 'g') {
		n = 0; // go: answered below; the caller starts the command
	} else if (got == 2 && req[0] == 'G') {
		int listener = cshell_seccomp(allow_userns, 1, host_root, tell_writes);
		if (listener == -1)
			status = errno ? errno : EINVAL;
		else if (listener >= 0)
			fds[n++] = listener; // sent below, then closed here
		handed_over = status == 0;
	} else if (got != 2 || !strchr("46uv", req[0]) || req[0] == 0 || req[1] < 1 || req[1] > MAX_BATCH) {
		status = EINVAL;
	} else {
		family = req[0] == '4' || req[0] == 'u' ? AF_INET : AF_INET6;
		int type = req[0] == 'u' || req[0] == 'v' ? SOCK_DGRAM : SOCK_STREAM;
		for (n = 0; n < req[1]; n++) {
			fds[n] = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (fds[n] < 0) {
				status = errno;
				break;
			}
		}
	}
	if (status == 0 && n > 0) {
		struct cmsghdr *c;
		memset(cbuf, 0, sizeof(cbuf));
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(n * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	}
	got = sendmsg(FACTORY_FD, &msg, MSG_NOSIGNAL);
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (got < 0)
		return -1;
	return (req[0] == 'g' || req[0] == 'G') && status == 0 ? 1 : 0;
}

// close_from closes every descriptor from fd on: past the factory, nothing
// cshell or runc handed in is the command's to hold.
static void close_from(int fd)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, fd, ~0U, 0) == 0)
		return;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	for (; fd < (max > 0 ? max : 1024); fd++)
		close(fd);
}

// open_plain opens path (O_PATH) with no symbolic link on the way: openat2
// with RESOLVE_NO_SYMLINKS, else one component at a time with O_NOFOLLOW.
static int open_plain(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	char buf[PATH_MAX], *part, *save = NULL;
	int fd, next;

	fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (fd >= 0 || (errno != ENOSYS && errno != EPERM))
		return fd;
	if (strlen(path) >= sizeof(buf) || path[0] != '/')
		return -1;
	strcpy(buf, path);
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (part = strtok_r(buf, "/", &save); fd >= 0 && part; part = strtok_r(NULL, "/", &save)) {
		next = openat(fd, part, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd;
}

// check_mount verifies one mount cshell set up, before anything runs:
// spec is "DEV:INO PATH", and PATH must be that file, reached with no
// symbolic link on the way. runc's init looked the paths up again after
// cshell resolved them, and a shell that can write a parent could have
// swapped a directory for a link in between.
static int check_mount(const char *spec)
{
	unsigned long long dev, ino;
	const char *path = strchr(spec, ' ');
	struct stat st;
	int fd;

	if (!path || sscanf(spec, "%llu:%llu", &dev, &ino) != 2)
		return -1;
	path++;
	fd = open_plain(path);
	if (fd < 0 || fstat(fd, &st) < 0 || (unsigned long long)st.st_dev != dev || (unsigned long long)st.st_ino != ino) {
		fprintf(stderr, "cshell: %s is not what cshell bound there (a shell may have swapped a directory on its way while this one started); nothing ran, try again\n", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

// exec_path runs a program named without a slash (arguments given as
// they are, not a shell command line) from the shell's PATH, as bash
// finds one: the first executable regular file of that name; folders it
// cannot search are passed over (glibc's execvp would give up with
// EACCES). A script without a #! line runs with /bin/sh. It returns
// only when nothing ran: errno ENOENT when no such file is anywhere,
// EACCES when only files that may not be run are.
static void exec_path(char **args, char **envp)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	int denied = 0;

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t n = end - path;
		struct stat st;

		if (n == 0) // an empty entry is the current directory
			n = snprintf(buf, sizeof(buf), "./%s", args[0]);
		else if (n + strlen(args[0]) + 2 <= sizeof(buf))
			n = snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, args[0]);
		else
			n = 0, buf[0] = 0;
		path = *end ? end + 1 : end;
		if (!buf[0] || stat(buf, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (access(buf, X_OK) < 0) {
			denied = 1;
			continue;
		}
		execve(buf, args, envp);
		if (errno == ENOEXEC) {
			char *sh[PATH_MAX / 16 + 2];
			int i;
			sh[0] = "/bin/sh";
			sh[1] = buf;
			for (i = 1; args[i] && i < (int)(sizeof(sh) / sizeof(sh[0])) - 2; i++)
				sh[i + 1] = args[i];
			sh[i + 1] = NULL;
			execve("/bin/sh", sh, envp);
		}
		denied = 1;
	}
	if (!denied) {
		fprintf(stderr, "cshell: %s: command not found\n", args[0]);
		_exit(127);
	}
	errno = EACCES;
}

// reap collects every exited child, orphans included, and ends PID 1 with
// the command's status once the command is among them.
static void reap(pid_t child)
{
	for (;;) {
		int ws;
		pid_t pid = waitpid(-1, &ws, WNOHANG);
		if (pid <= 0)
			return;
		if (pid == child)
			_exit(status_code(ws));
	}
}

__attribute__((constructor)) static void cshell_pid1(int argc, char **argv, char **envp)
{
	sigset_t all, old;
	pid_t child;
	int factory, events, sfd, listener = -1, told = 0;

	if (argc < 3 || strcmp(argv[1], "__pid1") != 0)
		return;
	checks = &argv[2];
	while (argc >= 3 && strncmp(argv[2], "--check=", 8) == 0) {
		if (check_mount(argv[2] + 8) < 0)
			_exit(125);
		argv[2] += 8; // kept as the spec, for a held init's second look
		nchecks++;
		argv++; // the command follows the checks
		argc--;
	}
	if (argc >= 3 && strcmp(argv[2], "--allow-userns") == 0) {
		allow_userns = 1;
		argv++;
		argc--;
	}
	if (argc >= 3 && strcmp(argv[2], "--root") == 0) {
		host_root = 1;
		argv++;
		argc--;
	}
	if (argc >= 3 && strcmp(argv[2], "--quiet-writes") == 0) {
		tell_writes = 0;
		argv++;
		argc--;
	}
	if (argc == 3 && strcmp(argv[2], "--held") == 0) { // the command comes later ("c")
		held = 1;
		argc--;
	}
	if (argc >= 3 && strcmp(argv[2], "--") == 0) { // the command follows, whatever its words
		argv++;
		argc--;
	}
	if (argc < 3 && !held)
		_exit(125);

	// The command runs as our user: were we dumpable, it could ptrace us
	// (and clear the parent-death signal below, outliving the
	// supervisor) or take our fd 3 with pidfd_getfd. The command's own
	// exec makes it dumpable again.
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		perror("cshell init: dumpable");
		_exit(125);
	}

	// libcontainer's parent-death signal does not survive its clones into
	// the new namespaces: when the thread that started the container
	// ends, the kernel kills PID 1 and with it the whole PID namespace.
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
		perror("cshell init: parent-death signal");
		_exit(125);
	}
	// Every signal waits in the queue until we take it; a blocked signal
	// reaches PID 1 even from inside its namespace.
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);

	factory = is_factory();
	events = is_pipe(EVENTS_FD) ? EVENTS_FD : -1;
	if (events >= 0) {
		fcntl(EVENTS_FD, F_SETFD, FD_CLOEXEC);
		fcntl(EVENTS_FD, F_SETFL, O_NONBLOCK);
		if (!factory)
			close(FACTORY_FD);
	}
	close_from(events >= 0 ? EVENTS_FD + 1 : factory ? FACTORY_FD + 1 : FACTORY_FD);
	if (held && !factory)
		_exit(125);
	if (factory) {
		fcntl(FACTORY_FD, F_SETFD, FD_CLOEXEC); // the command must not inherit it
		// Serve until "g"; a supervisor that hangs up first ends the shell.
		for (;;) {
			int r = serve_factory();
			if (r == 1)
				break;
			if (r < 0)
				_exit(125);
		}
	}
	// The syscall filter, on us and so on the command and all it starts
	// (already on when cshell took its listener at "G").
	if (!handed_over) {
		listener = cshell_seccomp(allow_userns, 0, host_root, 0);
		if (listener == -1) {
			perror("cshell init: syscall filter");
			_exit(125);
		}
	}
	child = fork();
	if (child < 0) {
		perror("cshell init: fork");
		_exit(125);
	}
	if (child == 0) {
		setpgid(0, 0);
		// A terminal: the command's group becomes its foreground group
		// (SIGTTOU is still blocked here, so this cannot stop us).
		if (isatty(0))
			tcsetpgrp(0, getpid());
		sigprocmask(SIG_SETMASK, &old, NULL);
		char **cmd = held ? held_argv : &argv[2];
		if (strchr(cmd[0], '/'))
			execve(cmd[0], cmd, envp);
		else
			exec_path(cmd, envp); // returns only when none could run
		fprintf(stderr, "cshell: cannot run %s: %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(child, child); // also here, so that no signal can miss the group

	sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("cshell init: signalfd");
		kill(-child, SIGKILL);
		_exit(125);
	}
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = listener, .events = POLLIN }, // negative: ignored
			{ .fd = factory ? FACTORY_FD : -1, .events = POLLIN },
		};
		if (poll(p, 3, -1) < 0)
			continue;
		if (p[1].revents & POLLIN) {
			int nr = cshell_answer(listener);
			// Tell cshell of the first refusal: one line, never blocking.
			if (nr >= 0 && events >= 0 && !told) {
				char line[64];
				int n = snprintf(line, sizeof(line), "userns %s\n", nr == __NR_unshare ? "unshare" : "clone");
				told = write(events, line, n) == n;
			}
		} else if (p[1].revents) {
			listener = -1;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD)
					reap(child);
				else
					kill(-child, si.ssi_signo);
			}
		}
		if (factory && p[2].revents && serve_factory() < 0) {
			close(FACTORY_FD);
			factory = 0; // the supervisor is gone or done with us
		}
	}
}
