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

// legacyModeArgs is modeArgs for the calls only this architecture has
// (open, creat, chmod, mknod).
func legacyModeArgs(nr int) (call string, path, flags, mode int, ok bool) {
	switch nr {
	case unix.SYS_OPEN:
		return "open", 0, 1, 2, true
	case unix.SYS_CREAT:
		return "creat", 0, -1, 1, true
	case unix.SYS_CHMOD:
		return "chmod", 0, -1, 1, true
	case unix.SYS_MKNOD:
		return "mknod", 0, -1, 1, true
	}
	return "", 0, 0, 0, false
}
