package shells

import "strings"

// The state dir's layout, every name cshell keeps there. Which files other
// tools may read is docs/state.md's; the rest are private.
const (
	lockName       = "lock"            // flock for changes that must not race; holds its holder's pid
	nextIDName     = "next-id"         // the next shell id
	noticesName    = "notices.jsonl"   // completion notices, one JSON object a line
	oldNoticesName = "notices.jsonl.1" // the notices before the last rotation
	shellsName     = "shells"          // shells/<id>/: one folder a shell
	exposingName   = "exposing"        // exposing/<id>: an empty file for each shell that exposes ports

	// In a shell's folder.
	metaName       = "meta.json"      // the record: what ps --json shows
	logName        = "output.log"     // output, the newest part
	oldLogName     = "output.log.1"   // output before the last rotation
	logBaseName    = "log-base"       // absolute offset of output.log's first byte
	logLockName    = "log.lock"       // flock: rotation against readers
	cursorName     = "cursor"         // output's read position
	violationsName = "violations.log" // refused network requests, one JSON object a line
	controlName    = "control.sock"   // the supervisor's control socket
	supervisorLog  = "supervisor.log" // what the supervisor did and what went wrong (slog text)
)

// shellFile names a file in a shell's folder, relative to the state dir.
func shellFile(id string, name ...string) string {
	return strings.Join(append([]string{shellsName, id}, name...), "/")
}

// validID reports whether s is a shell id as cshell writes them: a
// decimal number from 1, without leading zeros (and so a folder name
// that cannot lead anywhere else).
func validID(s string) bool {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
