package main

// The JSON answers of the commands that are not a record of their own
// (docs/cli.md names every field): one type each, so that a field's name
// is written once. run -d answers shells.Answer; ps, output and logs
// answer shells' records.

// killAnswer is kill --json's object for one shell (an array of them for
// all or several).
type killAnswer struct {
	ID              string `json:"id"`
	Status          string `json:"status"`
	StatusLine      string `json:"status_line"`
	AlreadyFinished bool   `json:"already_finished"`
	ExitCode        *int   `json:"exit_code"`
	Signal          string `json:"signal"`
	EscapedPids     []int  `json:"escaped_pids,omitempty"`
	Error           string `json:"error,omitempty"`
}

// readyAnswer is wait --ready's.
type readyAnswer struct {
	ID    string `json:"id"`
	Ready bool   `json:"ready"`
}

// pruneAnswer is cache prune's.
type pruneAnswer struct {
	Removed int   `json:"removed"`
	Bytes   int64 `json:"bytes"`
}

// allowAnswer and revokeAnswer are allow's and allow --revoke's.
type allowAnswer struct {
	Session string   `json:"session"`
	Allowed []string `json:"allowed"`
}

type revokeAnswer struct {
	Session string   `json:"session"`
	Revoked []string `json:"revoked"`
}
