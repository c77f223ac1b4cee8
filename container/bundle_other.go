//go:build !linux

package container

import (
	"fmt"
	"runtime"
)

// WriteBundle needs Linux: an OCI bundle describes Linux namespaces.
func WriteBundle(string, *Spec) error {
	return fmt.Errorf("an OCI bundle describes Linux namespaces; %s has none", runtime.GOOS)
}
