// cshell_seccomp installs cshell's syscall filter on the calling process
// (and so on everything it starts): seccomp_linux.c. root says the shell
// was started by the host's root (its user namespace of its own may not
// set extended attributes). It returns the listener of the calls it hands
// over (user namespaces; with egress, where cshell holds it, the modes
// and attributes refused; with tell_writes, its opens with write intent), -2 when
// there is none, -1 on an error.
int cshell_seccomp(int allow_userns, int egress, int root, int tell_writes);

// cshell_answer answers one call handed over on listener with EPERM and
// returns its number, or -1.
int cshell_answer(int listener);
