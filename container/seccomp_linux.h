// cshell_seccomp installs cshell's syscall filter on the calling process
// (and so on everything it starts): seccomp_linux.c.
int cshell_seccomp(int allow_userns);
