package container

import (
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// prestageChildEnv makes this test binary a stand-in for a container's
// init: it does what fd 5 asks (MaybePrestage), then waits for its stdin
// to close, keeping its namespaces.
const prestageChildEnv = "CSHELL_TEST_PRESTAGE_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(prestageChildEnv) == "1" {
		MaybePrestage()
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startPrestageChild starts the stand-in in a user and network namespace
// of its own, asked req on fd 5; it returns the parent's end and the
// child, which ends when the test does.
func startPrestageChild(t *testing.T, req prestage) (*os.File, *exec.Cmd) {
	t.Helper()
	parent, child, err := prestagePair(req)
	if err != nil {
		t.Fatal(err)
	}
	return parent, startChildWith(t, parent, child)
}

// startPrestageChildRaw asks the stand-in with msg as it is.
func startPrestageChildRaw(t *testing.T, msg []byte) *os.File {
	t.Helper()
	parent, child, err := socketPair()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parent.Write(msg); err != nil {
		t.Fatal(err)
	}
	startChildWith(t, parent, child)
	return parent
}

func startChildWith(t *testing.T, parent, child *os.File) *exec.Cmd {
	t.Helper()
	t.Cleanup(func() { parent.Close() })
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), prestageChildEnv+"=1")
	cmd.ExtraFiles = []*os.File{devnull, devnull, child} // fd 3, 4, 5
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	return cmd
}

// TestRulesFromParent: as root, cshell makes the egress's rules in the
// network namespace the init sends first, and the init's answer follows.
func TestRulesFromParent(t *testing.T) {
	if !fullRoot() {
		t.Skip("entering a shell's network namespace needs root with CAP_SYS_ADMIN")
	}
	parent, cmd := startPrestageChild(t, prestage{NetNS: true})
	if err := rulesFromParent(parent); err != nil {
		t.Fatalf("rulesFromParent: %v", err)
	}
	tracker, err := PrestageDone(parent)
	if err != nil {
		t.Fatalf("the init's answer: %v", err)
	}
	if tracker != nil {
		tracker.Close()
	}
	ns, err := netns.GetFromPid(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		t.Fatal(err)
	}
	chains, err := c.ListChains()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ch := range chains {
		if ch.Table.Name == "cshell" {
			names = append(names, ch.Name)
		}
	}
	slices.Sort(names)
	if strings.Join(names, " ") != "filter nat raw" {
		t.Errorf("chains of table cshell in the child's namespace: %q, want filter nat raw", names)
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	lo, err := h.LinkByIndex(1)
	if err != nil {
		t.Fatal(err)
	}
	if lo.Attrs().Flags&(1<<0) == 0 { // net.FlagUp
		t.Errorf("loopback is down in the child's namespace")
	}
	// None of it in this test's own namespace.
	own, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := own.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		if tb.Name == "cshell" {
			t.Errorf("a table cshell in this test's own network namespace")
		}
	}
}

// TestRulesFromParentInitFailed: an init that fails after it sent its
// namespace answers why as before; one that fails before is answered
// with its own words, not taken for a namespace.
func TestRulesFromParentInitFailed(t *testing.T) {
	if !fullRoot() {
		t.Skip("entering a shell's network namespace needs root with CAP_SYS_ADMIN")
	}
	parent, _ := startPrestageChild(t, prestage{NetNS: true, Top: []string{"/usr"}, Root: "/nonexistent"})
	if err := rulesFromParent(parent); err != nil {
		t.Fatalf("rulesFromParent: %v", err)
	}
	if _, err := PrestageDone(parent); err == nil || !strings.Contains(err.Error(), "/nonexistent") {
		t.Errorf("the init's answer: %v, want the root it could not open", err)
	}

	msg := binary.NativeEndian.AppendUint32([]byte(prestageHello), 9)
	bad := startPrestageChildRaw(t, append(msg, "{not json"...))
	err := rulesFromParent(bad)
	if err == nil || !strings.Contains(err.Error(), "could not prepare the shell: read the request: invalid character") {
		t.Errorf("rulesFromParent after a request the init could not read: %v", err)
	}
}
