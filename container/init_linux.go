package container

import (
	"os"

	"github.com/opencontainers/runc/libcontainer"
	_ "github.com/opencontainers/runc/libcontainer/nsenter" // the C half of container start-up
)

// MaybeInit turns this process into libcontainer's start-up inside the
// new namespaces when its argument is "init", and never returns then; main
// calls it before anything else. The container's PID 1 ("__pid1") never
// gets this far: it is an ELF constructor in C (pid1_linux.c) that runs
// before the Go runtime, so that a shell pays no Go start-up for its init.
// It starts the command in its own process group (the terminal's foreground
// group when there is one), passes every signal it gets on to that group,
// reaps every orphan, and exits with the command's status (128+N for
// signal N); the kernel then ends whatever else is left in the namespace.
func MaybeInit() {
	if len(os.Args) > 1 && os.Args[1] == "init" {
		MaybePrestage() // the stand-ins, binds and the egress's rules, when asked for
		libcontainer.Init()
	}
	if len(os.Args) > 2 && os.Args[1] == probeArg {
		probeChild(os.Args[2]) // cshell doctor's probes (restrict_linux.go)
	}
}
