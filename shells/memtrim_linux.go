package shells

import (
	"debug/elf"
	"os"

	"golang.org/x/sys/unix"
)

// dropStartupCode lets go of the pages of the binary that starting the
// shell touched (libcontainer, JSON, the CLI) and that a running supervisor
// no longer needs. The pages stay in the page cache, shared with every
// other cshell process; this process merely stops mapping them, and
// faults back in, cheaply, the few it uses while it supervises.
// Only segments that are read-only in the file are dropped: their content
// is the file's, so nothing is lost (but for breakpoints a debugger may
// have written into the code: they are gone with the page).
func dropStartupCode() {
	exe, err := elf.Open("/proc/self/exe")
	if err != nil {
		return
	}
	defer exe.Close()
	// A PIE loads elsewhere, and text relocations write to read-only
	// segments: leave such binaries alone (go build makes neither).
	if exe.Type != elf.ET_EXEC || textRelocated(exe) {
		return
	}
	page := uint64(os.Getpagesize())
	for _, p := range exe.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_W != 0 {
			continue
		}
		lo := (p.Vaddr + page - 1) &^ (page - 1) // whole pages inside the segment
		hi := (p.Vaddr + p.Filesz) &^ (page - 1)
		if hi > lo {
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
		}
	}
}

// textRelocated reports whether the dynamic loader patches read-only
// segments of the binary (DT_TEXTREL).
func textRelocated(exe *elf.File) bool {
	if v, err := exe.DynValue(elf.DT_TEXTREL); err == nil && len(v) > 0 {
		return true
	}
	v, err := exe.DynValue(elf.DT_FLAGS)
	return err == nil && len(v) > 0 && v[0]&uint64(elf.DF_TEXTREL) != 0
}
