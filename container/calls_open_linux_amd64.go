package container

import "golang.org/x/sys/unix"

// openArgs says whether call nr is an open the filter hands over, which
// argument holds its path, and which its flags (-1: creat, whose flags
// are O_CREAT|O_WRONLY|O_TRUNC).
func openArgs(nr int) (path, flags int, ok bool) {
	switch nr {
	case unix.SYS_OPENAT:
		return 1, 2, true
	case unix.SYS_OPEN:
		return 0, 1, true
	case unix.SYS_CREAT:
		return 0, -1, true
	}
	return 0, 0, false
}

// modeArgs says whether call nr (named call) sets a file's mode that the
// filter judges (seccomp_linux.c, modes), and which arguments hold its
// path (-1: a descriptor in argument 0), its flags (-1: none; else the
// mode counts only when they create) and its mode.
func modeArgs(nr int) (call string, path, flags, mode int, ok bool) {
	switch nr {
	case unix.SYS_OPENAT:
		return "openat", 1, 2, 3, true
	case unix.SYS_OPEN:
		return "open", 0, 1, 2, true
	case unix.SYS_CREAT:
		return "creat", 0, -1, 1, true
	case unix.SYS_CHMOD:
		return "chmod", 0, -1, 1, true
	case unix.SYS_MKNOD:
		return "mknod", 0, -1, 1, true
	case unix.SYS_FCHMOD:
		return "fchmod", -1, -1, 1, true
	case unix.SYS_FCHMODAT:
		return "fchmodat", 1, -1, 2, true
	case unix.SYS_FCHMODAT2:
		return "fchmodat2", 1, -1, 2, true
	case unix.SYS_MKNODAT:
		return "mknodat", 1, -1, 2, true
	}
	return "", 0, 0, 0, false
}

// xattrArgs says whether call nr (named call) sets an extended attribute,
// and which argument holds its path (-1: a descriptor in argument 0).
func xattrArgs(nr int) (call string, path int, ok bool) {
	switch nr {
	case unix.SYS_SETXATTR:
		return "setxattr", 0, true
	case unix.SYS_LSETXATTR:
		return "lsetxattr", 0, true
	case unix.SYS_FSETXATTR:
		return "fsetxattr", -1, true
	case unix.SYS_SETXATTRAT:
		return "setxattrat", 1, true
	}
	return "", 0, false
}
