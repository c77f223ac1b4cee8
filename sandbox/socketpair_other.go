//go:build !linux

package sandbox

import (
	"errors"
	"os"
)

// socketPair is never needed here: shells have no namespaces.
func socketPair() (*os.File, *os.File, error) {
	return nil, nil, errors.New("shells have no network namespace here")
}
