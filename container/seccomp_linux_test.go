package container

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompData lays out struct seccomp_data for golang.org/x/net/bpf's
// machine, whose absolute loads read big-endian words: each word the
// filter loads (nr, arch, the low half of each argument) is written
// big-endian at its offset, so the machine reads what the kernel would.
func seccompData(nr, arch uint32, args [6]uint32) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], a)
	}
	return b
}

func filterVM(t *testing.T, prog []unix.SockFilter) *bpf.VM {
	t.Helper()
	ins := make([]bpf.Instruction, len(prog))
	for i, f := range prog {
		ins[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}.Disassemble()
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		t.Fatalf("the filter is no valid program: %v", err)
	}
	return vm
}

// The range table of the plain pieces (seccomp_linux.c, put_verdicts)
// answers every call, with every argument pattern the rules look at, as
// the pieces one after the other do, for every kind of shell; and it is
// well under half as long (289 against 827 instructions for a plain shell).
func TestFilterCompaction(t *testing.T) {
	native, foreign := uint32(unix.AUDIT_ARCH_X86_64), uint32(unix.AUDIT_ARCH_I386)
	if runtime.GOARCH == "arm64" {
		native, foreign = unix.AUDIT_ARCH_AARCH64, unix.AUDIT_ARCH_ARM
	}
	setid := uint32(unix.S_ISUID | 0o755)
	create := uint32(unix.O_CREAT | unix.O_WRONLY)
	argSets := [][6]uint32{
		{},
		{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
		{unix.AF_VSOCK, unix.CLONE_NEWUSER, create, setid, 0, 0},
		{unix.CLONE_NEWNET, create, setid, setid, 0, 0},
		{0xffffff9c, 0, create | unix.O_TRUNC, 0o644, 0, 0},
		{unix.AF_INET6, 0o4755, 0, 0, 0, 0},
	}
	var nrs []uint32
	for nr := uint32(0); nr < 1100; nr++ {
		nrs = append(nrs, nr)
	}
	nrs = append(nrs, 0x40000000|1, 0x7fffffff, 0xffffffff)
	for _, c := range []struct{ allowUserns, egress, quiet, root, tell bool }{
		{}, {egress: true}, {egress: true, tell: true}, {quiet: true},
		{allowUserns: true}, {allowUserns: true, root: true}, {allowUserns: true, root: true, egress: true},
		{allowUserns: true, egress: true, tell: true}, {root: true, egress: true, tell: true},
	} {
		name := fmt.Sprintf("%+v", c)
		linear, err := filterProgram(c.allowUserns, c.egress, c.quiet, c.root, c.tell, true)
		if err != nil {
			t.Fatalf("%s: linear: %v", name, err)
		}
		table, err := filterProgram(c.allowUserns, c.egress, c.quiet, c.root, c.tell, false)
		if err != nil {
			t.Fatalf("%s: table: %v", name, err)
		}
		if len(table)*5 > len(linear)*2 {
			t.Errorf("%s: the table's program has %d instructions, the linear one %d: more than 40%%", name, len(table), len(linear))
		}
		lvm, tvm := filterVM(t, linear), filterVM(t, table)
		for _, arch := range []uint32{native, foreign} {
			for _, nr := range nrs {
				for _, args := range argSets {
					in := seccompData(nr, arch, args)
					want, err1 := lvm.Run(in)
					got, err2 := tvm.Run(in)
					if err1 != nil || err2 != nil || got != want {
						t.Fatalf("%s: call %d (arch %#x, args %v): table %#x (%v), linear %#x (%v)", name, nr, arch, args, got, err2, want, err1)
					}
				}
			}
		}
		// The verdicts themselves, for a few calls this machine has.
		for nr, want := range map[uint32]uint32{
			unix.SYS_READ:    unix.SECCOMP_RET_ALLOW,
			unix.SYS_KEYCTL:  unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM),
			unix.SYS_BPF:     unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM),
			1023:             unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS),
			unix.SYS_OPENAT2: unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS),
		} {
			if got, _ := tvm.Run(seccompData(nr, native, [6]uint32{})); uint32(got) != want {
				t.Errorf("%s: call %d: %#x, want %#x", name, nr, got, want)
			}
		}
		mount := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
		if c.allowUserns {
			mount = unix.SECCOMP_RET_ALLOW
		}
		if got, _ := tvm.Run(seccompData(unix.SYS_MOUNT, native, [6]uint32{})); uint32(got) != mount {
			t.Errorf("%s: mount: %#x, want %#x", name, got, mount)
		}
	}
}
