package netrelay

import "errors"

// ErrNoFactory means the shell has no socket factory: it runs without a
// network namespace of its own (process isolation, or not Linux).
var ErrNoFactory = errors.New("the shell has no network namespace of its own")
