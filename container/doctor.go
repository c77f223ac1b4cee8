package container

import "runtime"

// Check is one line of cshell doctor.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Restriction is one reason this host stops a shell's container, and how
// to lift it.
type Restriction struct {
	ID    string `json:"id"`
	Cause string `json:"cause"`
	Fix   string `json:"fix"`
}

// Sentence is the restriction as one line: the cause, then the fix.
func (r Restriction) Sentence() string { return r.Cause + "; " + r.Fix }

// Report is what this machine allows.
type Report struct {
	OS     string  `json:"os"`
	Checks []Check `json:"checks"`
	// Restrictions name what stops a shell's container here, each with
	// its fix; none when containers start.
	Restrictions []Restriction `json:"restrictions"`
	Isolation    Isolation     `json:"isolation"` // what auto picks
	Reason       string        `json:"reason"`
}

// Doctor probes this machine: it really creates the namespaces a shell
// needs rather than reading settings only.
func Doctor() Report {
	r := Report{OS: runtime.GOOS + "/" + runtime.GOARCH}
	r.Restrictions = Restrictions()
	if r.Restrictions == nil {
		r.Restrictions = []Restriction{}
	}
	r.Checks = checks(r.Restrictions)
	r.Isolation, r.Reason = autoChoice(r.Checks, r.Restrictions)
	return r
}
