// Package patchbpf provides utilities for patching libseccomp-generated cBPF
// programs in order to handle unknown syscalls and ENOSYS more gracefully.
package patchbpf
