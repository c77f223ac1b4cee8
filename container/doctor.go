package container

import "runtime"

// Check is one line of cshell doctor.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Report is what this machine allows.
type Report struct {
	OS        string    `json:"os"`
	Checks    []Check   `json:"checks"`
	Isolation Isolation `json:"isolation"` // what auto picks
	Reason    string    `json:"reason"`
}

// Doctor probes this machine: it really creates the namespaces a shell
// needs rather than reading settings only.
func Doctor() Report {
	r := Report{OS: runtime.GOOS + "/" + runtime.GOARCH}
	r.Checks = checks()
	r.Isolation, r.Reason = autoChoice(r.Checks)
	return r
}
