// The container's PID 1, in C: it runs before the Go runtime starts (an
// ELF constructor, as libcontainer's nsexec does), so a shell pays no Go
// start-up for its init. Selected by the argument "__pid1"; see pid1 in
// init_linux.go for the contract it keeps.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

static int status_code(int ws)
{
	if (WIFSIGNALED(ws))
		return 128 + WTERMSIG(ws);
	return WEXITSTATUS(ws);
}

__attribute__((constructor)) static void cshell_pid1(int argc, char **argv, char **envp)
{
	sigset_t all, old;
	pid_t child;

	if (argc < 3 || strcmp(argv[1], "__pid1") != 0)
		return;

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
		execve(argv[2], &argv[2], envp);
		fprintf(stderr, "cshell: cannot run %s: %s\n", argv[2], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	setpgid(child, child); // also here, so that no signal can miss the group

	for (;;) {
		siginfo_t info;
		int sig = sigwaitinfo(&all, &info);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			kill(-child, sig);
			continue;
		}
		// Reap every child, orphans included; end with the command.
		for (;;) {
			int ws;
			pid_t pid = waitpid(-1, &ws, WNOHANG);
			if (pid <= 0)
				break;
			if (pid == child)
				_exit(status_code(ws));
		}
	}
}
