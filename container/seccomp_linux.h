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

// cshell_filter_program writes the filter cshell_seccomp would install for
// these flags into out (at most max instructions) and returns its length,
// -1 on an error; linear: its pieces one after the other, as the source
// lists them, with no range table (for tests: seccomp_linux_test.go).
struct sock_filter;
int cshell_filter_program(int allow_userns, int egress_on, int quiet, int root, int tell_writes, int linear,
			  struct sock_filter *out, int max);
