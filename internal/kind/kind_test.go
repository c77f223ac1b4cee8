package kind

import (
	"errors"
	"io/fs"
	"testing"
)

func TestErrorMatchesKindAndCause(t *testing.T) {
	err := Errorf(Usage, "--env %q: %w", "A B", fs.ErrInvalid)
	if err.Error() != `--env "A B": invalid argument` {
		t.Errorf("sentence %q", err)
	}
	if !errors.Is(err, Usage) || !errors.Is(err, fs.ErrInvalid) || errors.Is(err, Refused) {
		t.Errorf("%v matches the wrong kinds", err)
	}
}
