package container

// #cgo CFLAGS: -Wall -O2
import "C" // builds pid1_linux.c: the container's PID 1, an ELF constructor
