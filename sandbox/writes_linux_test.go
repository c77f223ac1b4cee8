package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

func TestNewWrites(t *testing.T) {
	w := newWrites(policy.Filesystem{
		Workdir: "/w", Write: []string{"/data"}, Read: []string{"/w/ro"}, Hide: []string{"/w/.env"},
		Caches:  []policy.CacheBind{{Path: "/home/u/.cache/go", Source: "/var/cache/x"}},
		Missing: []policy.MissingPath{{Path: "/w/secret"}},
	}, func(policy.Violation) {})
	if want := []string{"/w", "/tmp", "/run", "/dev/shm", "/data", "/home/u/.cache/go"}; !slices.Equal(w.writable, want) {
		t.Errorf("writable %q, want %q", w.writable, want)
	}
	if want := []string{"/w/ro", "/w/.env", "/w/secret"}; !slices.Equal(w.readOnly, want) {
		t.Errorf("read-only %q, want %q", w.readOnly, want)
	}
}

func TestUnderAny(t *testing.T) {
	for _, c := range []struct {
		p     string
		roots []string
		want  bool
	}{
		{"/w", []string{"/w"}, true},
		{"/w/a/b", []string{"/x", "/w"}, true},
		{"/wx", []string{"/w"}, false},
		{"/", []string{"/w"}, false},
		{"/w", nil, false},
	} {
		if got := underAny(c.p, c.roots...); got != c.want {
			t.Errorf("underAny(%q, %q) = %v", c.p, c.roots, got)
		}
	}
}

func TestWriteViolation(t *testing.T) {
	v := WriteViolation("/etc/hosts", false)
	if v.Method != "write" || v.Rule != "/etc/hosts is read-only in the shell" || v.Hint != "--rw /etc/hosts lets shells write there" {
		t.Errorf("read-only: %+v", v)
	}
	v = WriteViolation("/home/u/.ssh", true)
	if v.Rule != "/home/u/.ssh is hidden from shells" || v.Hint != "" {
		t.Errorf("hidden: %+v", v)
	}
	if v := WriteViolation("/a\nb", true); strings.ContainsRune(v.Rule, '\n') {
		t.Errorf("a control character reached the record: %q", v.Rule)
	}
}

// judgeFixture is a shell's view of files under a directory of this
// machine (its root, as /proc/PID/root leads to one): /work writable,
// /work/ro read-only in it, /hidden a hidden stand-in (mode 0), /open
// an ordinary directory with a hidden file, /closed a directory no one
// but root may search, /.cshell/cshell a stand-in for cshell's own init.
func judgeFixture(t *testing.T) (root string, w *writes, told *violations) {
	root = t.TempDir()
	for _, d := range []string{"work/ro", "hidden", "open", "closed", ".cshell"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"open/stand-in", ".cshell/cshell"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for p, mode := range map[string]os.FileMode{"hidden": 0, "open/stand-in": 0, ".cshell/cshell": 0, "work/ro": 0, "closed": 0o600} {
		if err := os.Chmod(filepath.Join(root, p), mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, p := range []string{"hidden", "work/ro", "closed"} {
			os.Chmod(filepath.Join(root, p), 0o755) // so that the temporary directory can go
		}
	})
	told = &violations{}
	w = &writes{record: told.add, writable: []string{"/work"}, readOnly: []string{"/work/ro"}}
	return root, w, told
}

// TestJudge: a write refused because its place is hidden is told once,
// naming the hidden place; writes the policy allows, the kernel's own
// files, cshell's own init, places that are writable, and files that are
// not created are not told.
func TestJudge(t *testing.T) {
	root, w, told := judgeFixture(t)
	wr, create := unix.O_WRONLY, unix.O_WRONLY|unix.O_CREAT
	for _, c := range []struct {
		path  string
		flags int
		told  string // the rule told, "" for none
	}{
		{"/work/new", create, ""},
		{"/proc/self/attr/current", wr, ""},
		{"/dev/null", wr, ""},
		{"/open/new", create, ""},   // an ordinary directory: writable
		{"/open/absent", wr, ""},    // not created: it fails as missing
		{"/nowhere/absent", wr, ""}, // nor here
		{"/closed/new", create, ""}, // unsearchable but not hidden
		{"/hidden/new", create, "/hidden is hidden from shells"},
		{"/hidden/new", create, ""}, // told once
		{"/hidden/other", create, ""},
		{"/open/stand-in", wr, "/open/stand-in is hidden from shells"},
		{"/work/ro/new", create, "/work/ro is hidden from shells"}, // read-only within a writable place
		{"/work/../hidden/x", create, ""},                          // cleaned: /hidden, told already
		{"/.cshell/cshell", wr, ""},                                // cshell's own init: nothing for --rw to give
	} {
		before := len(told.all())
		w.judge(container.OpenCall{Pid: os.Getpid(), Path: c.path, Root: root, Dir: "/nonexistent/cwd", Flags: c.flags})
		got := told.all()[before:]
		switch {
		case c.told == "" && len(got) != 0:
			t.Errorf("%s: told %q", c.path, got[0].Rule)
		case c.told != "" && (len(got) != 1 || got[0].Rule != c.told || got[0].Method != "write"):
			t.Errorf("%s: told %+v, want %q", c.path, got, c.told)
		}
	}
}

// TestJudgeRelative: a relative path starts at the caller's working
// directory (its /proc/PID/cwd) or at its directory descriptor.
func TestJudgeRelative(t *testing.T) {
	root, w, told := judgeFixture(t)
	cmd := exec.Command("sleep", "60")
	cmd.Dir = filepath.Join(root, "open")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	cwd := fmt.Sprintf("/proc/%d/cwd", cmd.Process.Pid)
	w.judge(container.OpenCall{Pid: cmd.Process.Pid, Path: "stand-in", Dir: cwd, Root: "/", Flags: unix.O_WRONLY})
	want := filepath.Join(root, "open", "stand-in") + " is hidden from shells"
	if got := told.all(); len(got) != 1 || got[0].Rule != want {
		t.Errorf("told %+v, want %q", got, want)
	}
	// A directory descriptor's link is read each time.
	dir, err := os.Open(filepath.Join(root, "open"))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	told.list = nil
	w.told = nil
	w.judge(container.OpenCall{Pid: os.Getpid(), Path: "stand-in", Dir: fmt.Sprintf("/proc/self/fd/%d", dir.Fd()), Root: "/", Flags: unix.O_WRONLY})
	if got := told.all(); len(got) != 1 || got[0].Rule != want {
		t.Errorf("through a directory descriptor: told %+v, want %q", got, want)
	}
	// A caller gone: nothing to judge by.
	w.judge(container.OpenCall{Pid: 1 << 30, Path: "x", Dir: "/proc/1073741824/cwd", Root: "/", Flags: unix.O_WRONLY | unix.O_CREAT})
	if got := told.all(); len(got) != 1 {
		t.Errorf("a vanished caller's open was told: %+v", got[1:])
	}
}

// The told paths are bounded: past maxToldWrites the memory starts over.
func TestJudgeForgetsPastBound(t *testing.T) {
	root, w, told := judgeFixture(t)
	w.told = map[string]bool{"/hidden": true}
	for i := len(w.told); i < maxToldWrites; i++ {
		w.told[fmt.Sprint("/p", i)] = true
	}
	w.judge(container.OpenCall{Path: "/hidden/x", Root: root, Flags: unix.O_WRONLY | unix.O_CREAT})
	if len(told.all()) != 1 || len(w.told) != 1 {
		t.Errorf("told %d, %d paths remembered; want the memory started over", len(told.all()), len(w.told))
	}
}

// dirOf takes a process's working directory as read for cwdFor.
func TestDirOfCachesTheWorkingDirectory(t *testing.T) {
	w := &writes{}
	self := fmt.Sprintf("/proc/%d/cwd", os.Getpid())
	wd, _ := os.Getwd()
	if got, err := w.dirOf(container.OpenCall{Pid: os.Getpid(), Dir: self}); err != nil || got != wd {
		t.Fatalf("dirOf = %q, %v; want %q", got, err, wd)
	}
	if w.cwdPid != os.Getpid() || w.cwd != wd {
		t.Errorf("not remembered: %d %q", w.cwdPid, w.cwd)
	}
	// Taken as read: the remembered one answers.
	w.cwd, w.cwdRead = "/remembered", time.Now().Add(time.Hour)
	if got, _ := w.dirOf(container.OpenCall{Pid: os.Getpid(), Dir: self}); got != "/remembered" {
		t.Errorf("within cwdFor: %q", got)
	}
	// Too old, or another process: read again.
	w.cwdRead = time.Now().Add(-time.Hour)
	if got, _ := w.dirOf(container.OpenCall{Pid: os.Getpid(), Dir: self}); got != wd {
		t.Errorf("past cwdFor: %q", got)
	}
	w.cwd, w.cwdRead = "/remembered", time.Now().Add(time.Hour)
	if got, _ := w.dirOf(container.OpenCall{Pid: 1, Dir: self}); got != wd {
		t.Errorf("another pid: %q", got)
	}
}
