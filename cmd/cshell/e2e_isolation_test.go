//go:build e2e

package main

// Issue 22's attacks, each made from inside a shell the way an exploit
// makes it (system calls through ctypes, no program between), then checked
// on the host.

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// directCalls makes each call of its table directly and prints "name
// result" for each.
const directCalls = `python3 -c '
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
open("plant", "w").close()
calls = {
    "vsock": (41, 40, 1, 0),                 # socket(AF_VSOCK, SOCK_STREAM)
    "alg": (41, 38, 5, 0),                   # socket(AF_ALG, SOCK_SEQPACKET)
    "unix": (41, 1, 1, 0),
    "inet6": (41, 10, 1, 0),
    "netlink": (41, 16, 3, 0),
    "read_implies_exec": (135, 0x400000),    # personality
    "personality_query": (135, 0xffffffff),
    "no_randomize": (135, 0x40000),          # gdb, setarch -R
    "migrate_pages": (256, 0, 0, 0, 0),
    "move_pages": (279, 0, 0, 0, 0, 0, 0),
    "mbind": (237, 0, 0, 0, 0, 0, 0),
    "set_mempolicy": (238, 0, 0, 0),
    "pidfd_getfd": (438, 0, 0, 0),
    "process_madvise": (440, 0, 0, 0, 0, 0),
    "openat2": (437, -100, 0, 0, 0),
    "future_call": (1000, 0),
    "chmod_setuid": (90, ctypes.c_char_p(b"plant"), 0o4755),
    "chmod_setgid": (90, ctypes.c_char_p(b"plant"), 0o2755),
    "chmod_plain": (90, ctypes.c_char_p(b"plant"), 0o755),
    "fchmodat_setuid": (268, -100, ctypes.c_char_p(b"plant"), 0o6755),
    "fchmodat2_setuid": (452, -100, ctypes.c_char_p(b"plant"), 0o4755, 0),
    "open_setuid": (2, ctypes.c_char_p(b"plant2"), os.O_CREAT | os.O_WRONLY, 0o4755),
    "openat_setuid": (257, -100, ctypes.c_char_p(b"plant3"), os.O_CREAT | os.O_WRONLY, 0o4755),
    "tmpfile_setuid": (257, -100, ctypes.c_char_p(b"."), 0o20000000 | 0o200000 | os.O_WRONLY, 0o4755),
    "creat_setuid": (85, ctypes.c_char_p(b"plant4"), 0o4755),
    "mknodat_setuid": (259, -100, ctypes.c_char_p(b"plant5"), 0o100000 | 0o4755, 0),
}
for name in sys.argv[1:]:
    nr, *args = calls[name]
    r = libc.syscall(nr, *args)
    e = ctypes.get_errno()
    print(name, "ok" if r >= 0 else errno.errorcode.get(e, e))
' `

func probeCalls(t *testing.T, wd string, names []string, flags ...string) map[string]string {
	t.Helper()
	args := append([]string{"run"}, flags...)
	r := run(t, call{args: append(args, "--", directCalls+strings.Join(names, " ")), dir: wd})
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			got[f[0]] = f[1]
		}
	}
	if len(got) != len(names) {
		t.Fatalf("probe: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	return got
}

// The filter is an allowlist modelled on Docker's default: socket
// families outside Docker's list (AF_VSOCK, a way to the hypervisor that
// no network namespace covers) get EAFNOSUPPORT; personas, NUMA and
// cross-process calls Docker refuses without capabilities get EPERM; a
// call the list does not know gets ENOSYS, as on an older kernel.
func TestFilterIsAnAllowlist(t *testing.T) {
	requireAMD64(t)
	want := map[string]string{
		"vsock": "EAFNOSUPPORT", "alg": "EAFNOSUPPORT", "unix": "ok", "inet6": "ok", "netlink": "ok",
		"read_implies_exec": "EPERM", "personality_query": "ok", "no_randomize": "ok",
		"migrate_pages": "EPERM", "move_pages": "EPERM", "mbind": "EPERM", "set_mempolicy": "EPERM",
		"pidfd_getfd": "EPERM", "process_madvise": "EPERM", "openat2": "ENOSYS", "future_call": "ENOSYS",
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	for _, flags := range [][]string{nil, {"--allow-host", "example.invalid"}, {"--allow-userns"}} {
		got := probeCalls(t, t.TempDir(), names, flags...)
		for n, w := range want {
			if got[n] != w {
				t.Errorf("%v %s: %s, want %s", flags, n, got[n], w)
			}
		}
	}
}

// No file a shell writes gains the setuid or setgid bit, however it asks
// (chmod, fchmodat, fchmodat2, open, openat, O_TMPFILE, creat, mknodat):
// a shell started by root writes as the host's root, and such a file would
// run as root for whoever may reach the working directory. Plain modes
// still work.
func TestNoSetuidPlants(t *testing.T) {
	requireAMD64(t)
	names := []string{"chmod_setuid", "chmod_setgid", "chmod_plain", "fchmodat_setuid", "fchmodat2_setuid", "open_setuid",
		"openat_setuid", "tmpfile_setuid", "creat_setuid", "mknodat_setuid"}
	for _, flags := range [][]string{nil, {"--allow-userns"}} {
		wd := t.TempDir()
		got := probeCalls(t, wd, names, flags...)
		for _, n := range names {
			want := "EPERM"
			if n == "chmod_plain" {
				want = "ok"
			}
			if got[n] != want {
				t.Errorf("%v %s: %s, want %s", flags, n, got[n], want)
			}
		}
		// And as a tool would: cp and chmod from coreutils.
		r := run(t, call{args: append(append([]string{"run"}, flags...), "--", "cp /bin/true ./rootsh && chmod 4755 ./rootsh; chmod u+s ./rootsh; install -m 6755 /bin/true ./rootsh2"), dir: wd})
		if !strings.Contains(r.stderr, "Operation not permitted") {
			t.Errorf("%v: chmod 4755 in a shell: %q", flags, r.stderr)
		}
		// Each refusal is told, once a call and path, naming what it
		// would have made (install sets its mode through an ACL xattr
		// first, which root's shells with --allow-userns refuse).
		// (Not anchored to a line: the command's own stderr, written a
		// piece at a time, may surround cshell's line.)
		told := regexp.MustCompile(`cshell: refused fchmodat2? 4755 on \./rootsh: no file in a shell gets a setuid or setgid bit \(it could count on the host\)`)
		if !told.MatchString(r.stderr) || !regexp.MustCompile(`cshell: refused (\w+ 6755 on |fsetxattr on fd)`).MatchString(r.stderr) {
			t.Errorf("%v: the refusals are not told: %q", flags, r.stderr)
		}
		if n := strings.Count(r.stderr, "4755 on ./rootsh:"); n != 1 {
			t.Errorf("%v: the refusal of chmod 4755 ./rootsh told %d times: %q", flags, n, r.stderr)
		}
		_ = filepath.WalkDir(wd, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				if info, err := d.Info(); err == nil && info.Mode()&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
					t.Errorf("%v: %s is %v on the host", flags, p, info.Mode())
				}
			}
			return nil
		})
	}
}

// A file capability set by a user namespace of the shell's own counts on
// the host only when the shell was started by root (its namespace's root
// is the host's): there the shell sets no extended attribute at all.
// Started by another user, one may be set, but its root id is that user,
// and the host's root is not bound by it.
func TestNoFileCapabilitiesForTheHost(t *testing.T) {
	requireAMD64(t)
	wd := t.TempDir()
	setcap := `python3 -c '
import os, struct, errno
open("capped", "w").close()
# a VFS_CAP_REVISION_2 xattr: cap_dac_read_search and cap_sys_admin, effective
data = struct.pack("<IIIII", 0x02000001, (1 << 2) | (1 << 21), 0, 0, 0)
for name, value in (("security.capability", data), ("user.note", b"x")):
    try:
        os.setxattr("capped", name, value); print(name, "ok")
    except OSError as e:
        print(name, errno.errorcode[e.errno])
'`
	r := run(t, call{args: []string{"run", "--allow-userns", "--", "unshare -Ur sh -c " + shellQuote(setcap)}, dir: wd})
	if os.Geteuid() == 0 {
		if r.stdout != "security.capability EPERM\nuser.note EPERM\n" {
			t.Errorf("root's shell with --allow-userns: %q %q", r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "cshell: refused setxattr on capped: a shell started by root with --allow-userns sets no extended attribute (a file capability would count on the host)") {
			t.Errorf("the refused setxattr is not told: %q", r.stderr)
		}
	} else if !strings.Contains(r.stdout, "user.note ok") {
		t.Errorf("a rootless shell with --allow-userns cannot set a user xattr: %q %q", r.stdout, r.stderr)
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(filepath.Join(wd, "capped"), "security.capability", buf)
	if err == nil {
		// Version 3 carries the root id that the capabilities count for.
		if n < 24 || binary.LittleEndian.Uint32(buf)>>24 != 3 || binary.LittleEndian.Uint32(buf[20:]) == 0 {
			t.Errorf("a file capability that counts for the host's root: % x", buf[:n])
		}
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

var _ = fmt.Sprint

// Agent sockets stay out: the socket SSH_AUTH_SOCK names (where the shell
// would see it) and 1Password's and Bitwarden's in the home are hidden;
// -e SSH_AUTH_SOCK gives the agent on purpose.
func TestAgentSocketsHidden(t *testing.T) {
	requireLinux(t)
	home := varTmpDir(t)
	agents := varTmpDir(t)
	socks := []string{filepath.Join(agents, "agent.sock"), filepath.Join(home, ".1password", "agent.sock"), filepath.Join(home, ".bitwarden-ssh-agent.sock")}
	if err := os.MkdirAll(filepath.Join(home, ".1password"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range socks {
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("signed\n"))
				c.Close()
			}
		}()
	}
	connect := `python3 -c '
import socket, sys
for p in sys.argv[1:]:
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(p); print(p, s.recv(16).decode().strip())
    except OSError as e:
        print(p, type(e).__name__)
' ` + strings.Join(socks, " ")
	r := run(t, call{args: []string{"run", "--", connect}, dir: t.TempDir(), env: []string{"HOME=" + home, "SSH_AUTH_SOCK=" + socks[0]}})
	for _, p := range socks {
		if !strings.Contains(r.stdout, p+" ") || strings.Contains(r.stdout, p+" signed") {
			t.Errorf("%s reached from a shell: %q %q", p, r.stdout, r.stderr)
		}
	}
	r = run(t, call{args: []string{"run", "-e", "SSH_AUTH_SOCK", "--", connect}, dir: t.TempDir(), env: []string{"HOME=" + home, "SSH_AUTH_SOCK=" + socks[0]}})
	if !strings.Contains(r.stdout, socks[0]+" signed") {
		t.Errorf("-e SSH_AUTH_SOCK: the agent given on purpose is not reached: %q %q", r.stdout, r.stderr)
	}
}

// A cloud metadata endpoint stays closed, even allowed with --allow-host,
// by address or by name, through the proxy and without it; its refusal
// says what it is and suggests nothing. network.allowCloudMetadata opens
// it where it is allowed.
func TestCloudMetadataClosed(t *testing.T) {
	requireLinux(t)
	port := httpGreeter(t, "127.0.0.1:0", "instance credentials\n")
	hp := fmt.Sprintf("169.254.169.254:%d", port)
	probe := fmt.Sprintf(`curl -sS --max-time 5 --noproxy '*' http://metadata.google.internal:%d/ ; curl -sS --max-time 5 -x "$HTTP_PROXY" http://metadata.google.internal:%d/; getent hosts metadata.google.internal || echo unresolved`, port, port)
	args := []string{"run", "--allow-host", hp, "--allow-host", fmt.Sprintf("metadata.google.internal:%d", port), "--add-host", "metadata.google.internal:127.0.0.1", "--", probe}
	r := run(t, call{args: args, dir: t.TempDir()})
	if strings.Contains(r.stdout, "instance credentials") || !strings.Contains(r.stdout, "unresolved") {
		t.Errorf("the metadata endpoint was reached: %q %q", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "a cloud metadata endpoint") || strings.Contains(r.stderr, "--allow-host") {
		t.Errorf("the refusal does not say what it is, or suggests a flag: %q", r.stderr)
	}
	// By address, as an exploit kit probes it, directly and through the
	// proxy: refused before any connection is made, each told as what it
	// is, with no flag offered.
	byAddr := fmt.Sprintf(`curl -sS --max-time 3 --noproxy '*' http://%s/; curl -sS --max-time 3 -x "$HTTP_PROXY" http://%s/; true`, hp, hp)
	r = run(t, call{args: []string{"run", "--allow-host", hp, "--", byAddr}, dir: t.TempDir()})
	if n := strings.Count(r.stderr, "a cloud metadata endpoint"); n < 2 || strings.Contains(r.stderr, "--allow-host") || !strings.Contains(r.stderr, "refused connect "+hp) {
		t.Errorf("169.254.169.254 by address: %d refusals told as metadata, or a flag offered: %q", n, r.stderr)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"network": {"allowCloudMetadata": true}}`)
	r = run(t, call{args: append([]string{"--config", cfg}, args...), dir: t.TempDir()})
	if strings.Count(r.stdout, "instance credentials") != 2 {
		t.Errorf("with network.allowCloudMetadata the allowed endpoint is not reached: %q %q", r.stdout, r.stderr)
	}
}

// With requests held for grants (network.askSeconds, as serve sets), a
// name that is not allowed gets an address of the resolver's own, never a
// lookup on this machine: a name that does not exist anywhere resolves
// inside too (before, the host was asked, and the name leaked out).
func TestResolverAsksNothingOfNamesNotAllowed(t *testing.T) {
	requireLinux(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"network": {"askSeconds": 1}}`)
	name := fmt.Sprintf("cshell-e2e-%d.secret-data.invalid", os.Getpid())
	lookup := `python3 -c 'import socket, sys; print(socket.getaddrinfo(sys.argv[1], 80, socket.AF_INET)[0][4][0])' ` + name
	r := run(t, call{args: []string{"--config", cfg, "run", "--allow-host", "example.invalid", "--", lookup}, dir: t.TempDir()})
	if !strings.HasPrefix(r.stdout, "198.19.") {
		t.Errorf("a name that is not allowed was looked up on this machine (it does not exist there): %q %q", r.stdout, r.stderr)
	}
}

// The resolver's work is bounded: a shell that floods it with unique
// names of an allowed wildcard leaves its supervisor with few descriptors
// and little memory; the egress obeys shells.maxConnections.
func TestResolverAndEgressBounded(t *testing.T) {
	requireLinux(t)
	e := newBG(t)
	flood := `python3 -c '
import socket, os, time, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
end = time.time() + 3
i = 0
while time.time() < end:
    name = b"n%d-%d" % (os.getpid(), i)
    q = struct.pack(">HHHHHH", i & 0xffff, 0x100, 1, 0, 0, 0) + bytes([len(name)]) + name + b"\x05flood\x04test\x00" + struct.pack(">HH", 1, 1)
    try:
        s.sendto(q, ("127.0.0.53", 53))
    except BlockingIOError:
        pass
    i += 1
print("sent", i, flush=True)
time.sleep(60)
'`
	id := e.start(flood, "--allow-host", "*.flood.test")
	sup := int(e.meta(id)["supervisor_pid"].(float64))
	deadline := time.Now().Add(15 * time.Second)
	maxFDs, maxRSS := 0, 0
	for time.Now().Before(deadline) {
		maxFDs = max(maxFDs, openFDs(sup))
		maxRSS = max(maxRSS, rssKiB(sup))
		if strings.Contains(e.cs("logs", id).stdout, "sent") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if maxFDs > 200 || maxRSS > 100<<10 {
		t.Errorf("a DNS flood took the supervisor to %d descriptors and %d KiB", maxFDs, maxRSS)
	}

	// Connections: at most shells.maxConnections at once through the
	// egress; past it each is reset and a violation told. The holding
	// server says nothing, so a connection that can be read from at once
	// was reset.
	port := holdingServer(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"maxConnections": 20}}`)
	hold := fmt.Sprintf(`env -u HTTP_PROXY -u http_proxy python3 -c '
import socket, select, time
socks, refused = [], 0
for i in range(100):
    s = socket.socket()
    try:
        s.connect(("held.test", %d)); socks.append(s)
    except ConnectionResetError:
        refused += 1
time.sleep(2)
ready, _, _ = select.select(socks, [], [], 0)
for s in ready:
    try:
        s.recv(1)
    except ConnectionResetError:
        refused += 1
print("held", len(socks) - len(ready), "refused", refused)
'`, port)
	r := run(t, call{args: []string{"--config", cfg, "run", "--allow-host", fmt.Sprintf("held.test:%d", port), "--add-host", "held.test:127.0.0.1", "--", hold}, dir: t.TempDir()})
	if r.stdout != "held 20 refused 80\n" || !strings.Contains(r.stderr, "as many as shells.maxConnections allows") {
		t.Errorf("100 connects with shells.maxConnections 20: %q %q", r.stdout, r.stderr)
	}
}

// holdingServer accepts connections on this machine's loopback and holds
// them open until the test ends.
func holdingServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// Rootless, cshell's watchdog counts what a memory cgroup would: a memfd
// written and never mapped, and the shell's own tmpfs, whose sizes
// together stay within the limit. As root the cgroup counts them.
func TestMemoryCountsSharedMemory(t *testing.T) {
	requireLinux(t)
	memfd := `python3 -c '
import os, time
fd = os.memfd_create("hoard")
for i in range(300):
    os.write(fd, b"x" * (1 << 20))
print("wrote 300 MiB", flush=True)
time.sleep(1)
print("still here")
'`
	r := sh(t, "container", t.TempDir(), memfd, "--memory", "64m")
	if strings.Contains(r.stdout, "still here") || r.code == 0 {
		t.Errorf("300 MiB in a memfd under --memory 64m: code %d, out %q, err %q", r.code, r.stdout, r.stderr)
	}
	r = sh(t, "container", t.TempDir(), "df -k --output=size /tmp /run /dev/shm | tail -3", "--memory", "64m")
	total := 0
	for _, f := range strings.Fields(r.stdout) {
		var n int
		fmt.Sscan(f, &n)
		total += n
	}
	if total == 0 || total > 64<<10 {
		t.Errorf("/tmp, /run and /dev/shm take %d KiB together under --memory 64m: %q", total, r.stdout)
	}
}

// rssKiB is a process's resident memory, in KiB (0 when it is gone).
func rssKiB(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var n int
			fmt.Sscan(v, &n)
			return n
		}
	}
	return 0
}

// A write refused because its place is read-only or hidden in the shell
// is told once a path, with what would allow it, as the network's
// refusals are: on stderr in the foreground, in output and events for a
// background shell. Writes the policy allows, and tools that merely probe
// (python's bytecode caches), tell nothing.
func TestRefusedWritesTold(t *testing.T) {
	requireLinux(t)
	wd := t.TempDir()
	writes := "touch /usr/cshell-e2e-write 2>/dev/null; touch /usr/cshell-e2e-write2 2>/dev/null; : > ~/.ssh/cshell-e2e 2>/dev/null; echo ok > written; python3 -c 'import json, encodings.idna'; true"
	r := run(t, call{args: []string{"run", "--", writes}, dir: wd})
	home, _ := os.UserHomeDir()
	for _, want := range []string{
		"cshell: refused write: /usr is read-only in the shell; --rw /usr lets shells write there\n",
		"cshell: refused write: " + home + "/.ssh is hidden from shells\n",
	} {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr lacks %q once: %q", want, r.stderr)
		}
	}
	if n := strings.Count(r.stderr, "refused write"); n != 2 {
		t.Errorf("%d refused writes told, want 2 (once a path; none for what the policy allows or python probes): %q", n, r.stderr)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"sandbox": {"tellRefusedWrites": false}}`)
	if r := run(t, call{args: []string{"--config", cfg, "run", "--", writes}, dir: wd}); strings.Contains(r.stderr, "refused write") {
		t.Errorf("sandbox.tellRefusedWrites false: %q", r.stderr)
	}
	e := newBG(t)
	id := e.start(writes + "; sleep 30")
	deadline := time.Now().Add(10 * time.Second)
	var seen strings.Builder
	for time.Now().Before(deadline) && !strings.Contains(seen.String(), ".ssh is hidden") {
		seen.WriteString(e.cs("output", id).stdout)
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(seen.String(), "violation: refused write: /usr is read-only in the shell; --rw /usr lets shells write there") {
		t.Errorf("output: %q", seen.String())
	}
	if ev := e.cs("--json", "events").stdout; !strings.Contains(ev, `"event":"write"`) || !strings.Contains(ev, "/usr is read-only in the shell") {
		t.Errorf("events: %q", ev)
	}
}

// TestEgressRulesHold: the rules that send a shell's outbound traffic to
// cshell are the namespace's, and the shell cannot touch them. As an
// exploit would, the shell speaks netlink to nftables itself: deleting
// cshell's table, and flushing every rule, are refused (EPERM: it holds no
// capability over its namespace), and reading them is too. Afterwards a
// direct connection is still taken to the egress and refused there (told
// as a refused connect, not lost in a namespace with no rules), and
// traffic that is neither TCP nor UDP still leaves nothing.
func TestEgressRulesHold(t *testing.T) {
	requireLinux(t)
	probe := `env -u HTTP_PROXY -u http_proxy python3 -c '
import socket, struct, errno
NFT = 10  # NFNL_SUBSYS_NFTABLES
def msg(typ, flags, seq, family, attrs=b"", res=0):
    body = struct.pack("BBH", family, 0, socket.htons(res)) + attrs
    return struct.pack("=IHHII", 16 + len(body), typ, flags, seq, 0) + body
def attr(kind, data):
    n = 4 + len(data)
    return struct.pack("=HH", n, kind) + data + b"\0" * ((4 - n % 4) % 4)
def ask(payload, seq):
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12)  # NETLINK_NETFILTER
    s.settimeout(5)
    s.sendto(payload, (0, 0))
    while True:
        b = s.recv(65536)
        size, typ, flags, got = struct.unpack("=IHHI", b[:12])
        if typ == 2:  # NLMSG_ERROR: an errno, or 0 for the ack of the one asked
            e = -struct.unpack("=i", b[16:20])[0]
            if e or got == seq:
                return e
REQ, ACK, DUMP = 1, 4, 0x300
name = attr(1, b"cshell\0")  # NFTA_TABLE_NAME
batch = lambda inner, seq: msg(0x10, REQ, seq - 1, 0, res=NFT) + inner + msg(0x11, REQ, seq + 1, 0, res=NFT)
e = ask(batch(msg(NFT << 8 | 2, REQ | ACK, 101, 1, name), 101), 101)  # NFT_MSG_DELTABLE inet cshell
print("delete table:", errno.errorcode.get(e, e))
e = ask(batch(msg(NFT << 8 | 2, REQ | ACK, 201, 0), 201), 201)  # NFT_MSG_DELTABLE, every family: the whole ruleset
print("flush ruleset:", errno.errorcode.get(e, e))
e = ask(msg(NFT << 8 | 1, REQ | ACK, 301, 1, name), 301)  # NFT_MSG_GETTABLE
print("read table:", errno.errorcode.get(e, e))
c = socket.socket(); c.settimeout(10)
try:
    c.connect(("192.0.2.1", 9)); c.recv(1); print("connect: no reset")
except ConnectionResetError:
    print("connect: reset")
except OSError as x:
    print("connect:", x)
try:
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    r.sendto(b"\x08\0\0\0\0\0\0\0", ("192.0.2.1", 0)); print("icmp: sent")
except OSError as x:
    print("icmp:", errno.errorcode.get(x.errno, x))
'`
	r := run(t, call{args: []string{"run", "--", probe}, dir: t.TempDir()})
	for _, want := range []string{"delete table: EPERM", "flush ruleset: EPERM", "read table: EPERM", "connect: reset"} {
		if !strings.Contains(r.stdout, want+"\n") {
			t.Errorf("the shell's attempt on its rules: want %q\nstdout %s\nstderr %s", want, r.stdout, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "icmp: sent") && !strings.Contains(r.stdout, "icmp: EPERM") {
		// ping sockets are off (net.ipv4.ping_group_range) in a new
		// namespace, and a sent one would be dropped: either way nothing leaves.
		t.Logf("icmp: %s", r.stdout)
	}
	if !strings.Contains(r.stderr, "refused connect 192.0.2.1:9") {
		t.Errorf("the connect after the attempts was not taken to the egress and told: %s", r.stderr)
	}
}
