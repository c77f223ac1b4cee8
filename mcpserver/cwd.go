package mcpserver

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/policy"
)

// The working directory persists between the foreground calls of one
// server, as agent hosts' own shell tools keep it: a call that ends in
// another directory inside the server's working directory leaves the
// next call there. Shell variables do not persist (each call is a new
// bash), and jobs started with & end with their call.
//
// A call learns where its command ended from a line its bash writes as it
// exits (an EXIT trap: a command that sets its own, or execs, leaves the
// directory as it was), marked with a token of the server's and taken out
// of the output. A command can write that line itself, but it only ever
// chooses a directory it could have cd'ed to: one outside the server's
// working directory, or reached through a symbolic link, is refused as a
// cwd argument is.

// dirLineRoom is what a call's output buffer holds beyond the output it
// returns: the directory line (its mark and a path of up to 4 KiB).
const dirLineRoom = 4200

// newDirMark is a server's mark of the line that tells the directory.
func newDirMark() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "__cshell_cwd_" + hex.EncodeToString(b) + "__="
}

// tracked is a foreground command line that tells where it ended.
func (s *server) tracked(command string) string {
	if runtime.GOOS == "windows" {
		return command // cmd has no EXIT trap: calls start where the server does
	}
	return fmt.Sprintf("trap 'printf \"\\n%s\"; pwd -P' EXIT\n%s", s.dirMark, command) // pwd is bash's own: no fork
}

// dir is where the next call runs: where the last foreground call ended,
// or the server's working directory.
func (s *server) dir() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cwd == "" {
		return s.workdir
	}
	return s.cwd
}

// takeDir takes the directory line out of a call's output and keeps the
// directory for the next call. note says when it was refused.
func (s *server) takeDir(out string) (rest, note string) {
	i := strings.LastIndex(out, "\n"+s.dirMark)
	if i < 0 || !strings.HasSuffix(out, "\n") || strings.Count(out[i+1:], "\n") != 1 {
		return out, ""
	}
	ended := strings.TrimSuffix(out[i+1+len(s.dirMark):], "\n")
	rest = out[:i]
	if ended == s.dir() {
		return rest, ""
	}
	start, err := policy.StartDir(s.workdir, ended)
	if err != nil {
		return rest, fmt.Sprintf("[cshell: the command ended in %s, outside the server's working directory; the next call starts in %s]", escape.Line(ended), escape.Line(s.dir()))
	}
	s.mu.Lock()
	s.cwd = start
	if start == s.workdir {
		s.cwd = ""
	}
	s.mu.Unlock()
	return rest, ""
}
