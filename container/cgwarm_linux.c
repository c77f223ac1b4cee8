// The cgroup lock's head start (see cgwarm_linux.go): an ELF constructor,
// run before the Go runtime starts, as nsexec and PID 1 are, starts the
// wait that the first move between cgroups costs.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgwarm_linux.h"

int cshell_cgwarm_wanted(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "__supervise") == 0)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--state-dir") == 0 || strcmp(argv[i], "--config") == 0)
			i++; // its value follows
		else if (argv[i][0] != '-')
			return strcmp(argv[i], "run") == 0;
	}
	return 0;
}

// leaves reports whether a cgroup path has a ".." in it (a process
// outside its cgroup namespace's root sees such paths).
static int leaves(const char *p)
{
	for (const char *s = p; (s = strstr(s, "..")) != NULL; s += 2)
		if ((s == p || s[-1] == '/') && (s[2] == 0 || s[2] == '/'))
			return 1;
	return 0;
}

static int exists(const char *root, const char *path)
{
	char full[CGWARM_PATH_MAX + 256];
	if (snprintf(full, sizeof full, "%s%s", root, path) >= (int)sizeof full)
		return 0;
	return access(full, F_OK) == 0;
}

int cshell_cgwarm_procs(const char *data, const char *root, char *out, size_t n)
{
	const char *line = data;
	while (*line) {
		const char *end = strchrnul(line, '\n');
		char buf[CGWARM_PATH_MAX], *ctl, *path, *next = NULL;
		size_t len = (size_t)(end - line);
		int w;
		if (len < sizeof buf) {
			memcpy(buf, line, len);
			buf[len] = 0;
			ctl = strchr(buf, ':');
			path = ctl ? strchr(ctl + 1, ':') : NULL;
			if (path && path[1] == '/' && !leaves(path + 1)) {
				*ctl++ = 0;
				*path++ = 0;
				if (strcmp(buf, "0") == 0 && *ctl == 0) {
					// cgroup v2 mounted at /sys/fs/cgroup, not a hybrid's
					// unified hierarchy mounted elsewhere
					if (exists(root, "/sys/fs/cgroup/cgroup.controllers"))
						next = "";
				} else if (*ctl != 0 && strncmp(ctl, "name=", 5) != 0) {
					ctl[strcspn(ctl, ",")] = 0; // the first of those mounted together
					next = ctl;
				}
			}
			if (next != NULL) {
				if (strcmp(path, "/") == 0)
					path = "";
				w = snprintf(out, n, "/sys/fs/cgroup%s%s%s/cgroup.procs", *next ? "/" : "", next, path);
				if (w > 0 && (size_t)w < n && exists(root, out))
					return 0;
			}
		}
		line = *end ? end + 1 : end;
	}
	return -1;
}

// member reports whether pid is listed in a cgroup.procs file (a move
// into it then changes nothing).
static int member(const char *procs, pid_t pid)
{
	char buf[4096], part[16];
	size_t have = 0;
	ssize_t n;
	int fd = open(procs, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0)
		return 0;
	while (!found && (n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n && !found; i++) {
			if (buf[i] != '\n') {
				if (have < sizeof part - 1)
					part[have++] = buf[i];
				continue;
			}
			part[have] = 0;
			found = atoi(part) == pid;
			have = 0;
		}
	}
	close(fd);
	return found;
}

int cshell_cgwarm_move(const char *procs)
{
	int fd, err = 0;
	// The file came from /proc/self/cgroup, but a cgroup namespace whose
	// /sys/fs/cgroup shows another tree would name another cgroup: move
	// only where this process already is.
	if (!member(procs, getpid()))
		return ENOENT;
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (write(fd, "0", 1) < 0) // 0: this process, every thread of it
		err = errno;
	if (close(fd) < 0 && err == 0)
		err = errno;
	return err;
}

static void *cgwarm(void *arg)
{
	char data[8192], procs[CGWARM_PATH_MAX];
	ssize_t got = 0, r;
	int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	(void)arg;
	if (fd < 0)
		return NULL;
	while (got < (ssize_t)sizeof data - 1 && (r = read(fd, data + got, sizeof data - 1 - got)) > 0)
		got += r;
	close(fd);
	data[got] = 0;
	if (cshell_cgwarm_procs(data, "", procs, sizeof procs) == 0)
		cshell_cgwarm_move(procs);
	return NULL;
}

__attribute__((constructor)) static void cshell_cgwarm(int argc, char **argv, char **envp)
{
	pthread_t t;
	pthread_attr_t a;
	sigset_t all, old;
	(void)envp;
	if (geteuid() != 0 || !cshell_cgwarm_wanted(argc, argv))
		return;
	// The thread takes no signal: Go's handlers are for its own threads.
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_attr_init(&a) == 0) {
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&a, 64 << 10);
		pthread_create(&t, &a, cgwarm, NULL);
		pthread_attr_destroy(&a);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
