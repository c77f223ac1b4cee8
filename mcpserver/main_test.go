package mcpserver

import (
	"os"
	"testing"

	"github.com/cshell/cshell/shells"
)

// TestMain lets the test binary be a background shell's supervisor: the
// shells package starts one by running os.Executable() with
// shells.SuperviseArg first.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shells.SuperviseArg {
		os.Exit(shells.Supervise(os.Args[2:]))
	}
	os.Exit(m.Run())
}
