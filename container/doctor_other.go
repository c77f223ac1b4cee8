//go:build !linux

package container

import "runtime"

func checks([]Restriction) []Check {
	return []Check{{Name: "namespaces", OK: false, Detail: "containers need Linux; " + runtime.GOOS + " runs shells in a process group"}}
}

// Restrictions: containers need Linux, which checks name the lack of.
func Restrictions() []Restriction { return nil }

func autoChoice([]Check, []Restriction) (Isolation, string) {
	return Process, "auto uses a process group on " + runtime.GOOS + ": there are no Linux namespaces"
}
