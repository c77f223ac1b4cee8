package shells

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cshell/cshell/internal/safefs"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

// maxViolationsLog bounds a shell's violations.log: a command refused in a
// loop must not fill the disk.
const maxViolationsLog = 1 << 20

// violationLog appends violations to a shell's violations.log, until it
// holds maxViolationsLog bytes; a last line says that later ones are lost.
func violationLog(dir *safefs.Dir) func(policy.Violation) {
	var mu sync.Mutex
	full := false
	return func(v policy.Violation) {
		b, err := json.Marshal(v)
		if err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if full {
			return
		}
		f, err := dir.OpenFile(violationsName, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.Size()+int64(len(b))+1 > maxViolationsLog {
			full = true
			b, _ = json.Marshal(policy.Violation{Time: v.Time,
				Rule: fmt.Sprintf("violations.log is full (%d MiB): later refusals are not recorded", maxViolationsLog>>20)})
		}
		_, _ = f.Write(append(b, '\n'))
	}
}

// recordAndTell records a refusal and tells it as an event (a network
// refusal: one with a host).
func recordAndTell(record func(policy.Violation), tell func(host string, port int)) func(policy.Violation) {
	return func(v policy.Violation) {
		record(v)
		if v.Host != "" && v.Credential == "" { // a credential's refusal asks for no grant
			tell(v.Host, v.Port)
		}
	}
}

// violationNote tells a foreground user of each refusal, on stderr.
func violationNote(w io.Writer, words *plan.Words, session string) func(policy.Violation) {
	var mu sync.Mutex
	return func(v policy.Violation) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "cshell: %s\n", describeViolation(inWords(v, words, session)))
	}
}

// inWords gives a refusal the hint of the reader's words: a model cannot
// pass --allow-host, but its user can run cshell allow.
func inWords(v policy.Violation, words *plan.Words, session string) policy.Violation {
	if v.Allow != "" && words != nil && words.Allow != nil {
		v.Hint = words.Allow(session, v.Allow)
	}
	return v
}

// describeViolation is the human line for a refusal.
func describeViolation(v policy.Violation) string {
	switch v.Method {
	case "memory": // a process the memory limit ended
		return v.Rule
	case "privilege": // a setuid mode or a file capability the filter refused
		return "refused " + v.Rule
	case "write": // a write the shell's view of the files refused
		s := "refused write: " + v.Rule
		if v.Hint != "" {
			s += "; " + v.Hint
		}
		return s
	}
	if v.Host == "" && v.Method != "" { // a call the syscall filter refused
		s := fmt.Sprintf("refused %s(CLONE_NEWUSER) (%s)", v.Method, v.Rule)
		if v.Hint != "" {
			s += "; " + v.Hint
		}
		return s
	}
	if v.Host == "" { // a note of the log itself
		return v.Rule
	}
	if v.Method == "DNS" { // a name the shell's resolver did not answer
		s := fmt.Sprintf("refused to resolve %s (%s)", v.Host, v.Rule)
		if v.Hint != "" {
			s += "; " + v.Hint
		}
		return s
	}
	s := fmt.Sprintf("refused %s %s:%d (%s)", v.Method, v.Host, v.Port, v.Rule)
	if v.Hint != "" {
		s += "; " + v.Hint
	}
	return s
}
