// Package kind gives an error two faces: the sentence the user reads, and
// the sentinel callers branch on (errors.Is), which decides the exit code.
package kind

import (
	"errors"
	"fmt"
)

// The kinds every layer may return; packages add their own sentinels.
var (
	// Usage marks bad input: a flag value, a path, an environment entry.
	Usage = errors.New("bad input")
	// Refused marks what the policy or the state does not allow.
	Refused = errors.New("refused")
)

// Error is a sentence for the user that still matches its sentinel.
type Error struct{ Kind, Err error }

func (e *Error) Error() string   { return e.Err.Error() }
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// Errorf is fmt.Errorf's sentence, of kind k.
func Errorf(k error, format string, a ...any) error {
	return &Error{k, fmt.Errorf(format, a...)}
}
