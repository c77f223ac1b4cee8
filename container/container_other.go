//go:build !linux

package container

import "fmt"

// containerSupported is false: containers need Linux namespaces.
const containerSupported = false

func newContainerRunner() (Runner, error) {
	return nil, fmt.Errorf("%w: container isolation needs Linux namespaces; use --isolation process", ErrSandbox)
}

// MaybeInit does nothing off Linux: there is no container init to run.
func MaybeInit() {}

// CollectGarbage does nothing: there are no containers here.
func CollectGarbage() {}

// RuntimeDir does not exist here: there is no container state to keep.
func RuntimeDir() (string, error) {
	return "", fmt.Errorf("no runtime directory: containers need Linux")
}

// LimitsEnforcement: there are no containers here to bound.
func LimitsEnforcement() string { return "" }

// CPUsHeld: no cgroup here either.
func CPUsHeld() bool { return false }

// Args: a held shell needs a container; see the Linux one.
func Args(command string, argv []string) []string {
	s := Spec{Command: command, Argv: argv}
	return s.args(func(string) (string, error) { return "", fmt.Errorf("no container here") })
}

// CountRunning: no containers here.
func CountRunning(string) int { return 0 }
