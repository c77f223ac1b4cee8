#ifndef CSHELL_CGWARM_H
#define CSHELL_CGWARM_H
#include <stddef.h>

#define CGWARM_PATH_MAX 4096

// cshell_cgwarm_wanted: whether argv starts a shell at once (run, after
// the global flags, or a background shell's supervisor).
int cshell_cgwarm_wanted(int argc, char **argv);
// cshell_cgwarm_procs: the cgroup.procs file of this process's cgroup,
// from /proc/self/cgroup's text, into out; files are looked for under
// root ("" on a host). 0, or -1 when there is none.
int cshell_cgwarm_procs(const char *data, const char *root, char *out, size_t n);
// cshell_cgwarm_move: move this process into the cgroup whose
// cgroup.procs file procs is, only when that file lists it already (a
// move that changes nothing); 0 or an errno (ENOENT: not listed).
int cshell_cgwarm_move(const char *procs);
#endif
