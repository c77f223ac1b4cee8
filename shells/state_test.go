package shells

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStateDirChoice(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CSHELL_STATE_DIR", "")
	t.Setenv("XDG_STATE_HOME", "")
	if got, want := StateDir("", home), filepath.Join(home, ".local", "state", "cshell"); got != want {
		t.Errorf("default: %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", filepath.FromSlash("/xdg"))
	if got, want := StateDir("", home), filepath.Join(filepath.FromSlash("/xdg"), "cshell"); got != want {
		t.Errorf("XDG_STATE_HOME: %q, want %q", got, want)
	}
	t.Setenv("CSHELL_STATE_DIR", "/env")
	if got := StateDir("", home); got != "/env" {
		t.Errorf("CSHELL_STATE_DIR: %q", got)
	}
	if got := StateDir("/flag", home); got != "/flag" {
		t.Errorf("the flag: %q", got)
	}
	if got, want := DefaultStateDir(home), filepath.Join(filepath.FromSlash("/xdg"), "cshell"); got != want {
		t.Errorf("DefaultStateDir ignores CSHELL_STATE_DIR: %q, want %q", got, want)
	}
}

// With no home to keep state in (an arbitrary uid in a CI container: HOME
// unset, /, or missing), the state dir is a folder of the user's in its
// runtime dir's place, or the temporary directory.
func TestStateDirWithoutAHome(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "")
	tmp, rt := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", tmp)
	t.Setenv("XDG_RUNTIME_DIR", "")
	want := filepath.Join(tmp, fmt.Sprintf("cshell-state-%d", os.Geteuid()))
	for _, home := range []string{"", "/", filepath.Join(tmp, "missing"), "relative"} {
		if got := DefaultStateDir(home); got != want {
			t.Errorf("home %q: %q, want %q", home, got, want)
		}
	}
	t.Setenv("XDG_RUNTIME_DIR", rt)
	if got, want := DefaultStateDir("/"), filepath.Join(rt, fmt.Sprintf("cshell-state-%d", os.Geteuid())); got != want {
		t.Errorf("with XDG_RUNTIME_DIR: %q, want %q", got, want)
	}
	// A home whose state dir exists is kept, writable or not.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".local", "state", "cshell"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := DefaultStateDir(home); got != filepath.Join(home, ".local", "state", "cshell") {
		t.Errorf("an existing state dir in the home: %q", got)
	}
	// The fallback opens as any state dir: made 0700, this user's.
	m, err := Open(want, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the fallback state dir: %v %v", st, err)
	}
}

func TestOpenMakesItsFolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "state")
	m, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Dir() != path {
		t.Errorf("Dir() = %q, want %q", m.Dir(), path)
	}
	for _, sub := range []string{"shells", "exposing"} {
		if st, err := os.Stat(filepath.Join(path, sub)); err != nil || !st.IsDir() {
			t.Errorf("%s: %v", sub, err)
		}
	}
	if got := m.logPath("4"); got != filepath.Join(path, "shells", "4", "output.log") {
		t.Errorf("logPath: %q", got)
	}
	// Opened again, the folders are found as they are.
	m2, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m2.Close()
}

func TestOpenRefusesAFileWhereAFolderGoes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	m, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if err := os.Remove(filepath.Join(path, "exposing")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "exposing"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, nil); !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), "exposing is not a directory") {
		t.Errorf("a file named exposing: %v", err)
	}
}

func TestListAndFind(t *testing.T) {
	m := testManager(t)
	var warned []string
	m.Warn = func(s string) { warned = append(warned, s) }
	for _, id := range []string{"10", "2", "1"} {
		meta := exited(id, 0)
		if id != "2" {
			meta.Name = "web"
		}
		writeRecord(t, m, meta, "")
	}
	// Not shells: a name that is no id, a folder without a record; and a
	// record nobody can read.
	for _, d := range []string{"notes", "4", "3"} {
		if err := m.dir.Mkdir(shellFile(d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.dir.WriteFile(shellFile("3", metaName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, meta := range m.List() {
		ids = append(ids, meta.ID)
	}
	if fmt.Sprint(ids) != "[1 2 10]" {
		t.Errorf("List: %v, want [1 2 10]", ids)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "skipped shell 3") {
		t.Errorf("warnings: %q", warned)
	}

	for ref, want := range map[string]string{"2": "2", "web": "10", "10": "10"} {
		meta, err := m.Find(ref)
		if err != nil || meta.ID != want {
			t.Errorf("Find(%q) = %v, %v; want shell %s", ref, meta, err, want)
		}
	}
	for _, ref := range []string{"99", "007", "-1", "nope"} {
		if _, err := m.Find(ref); !errors.Is(err, ErrNotFound) {
			t.Errorf("Find(%q): %v, want ErrNotFound", ref, err)
		}
	}
	if _, err := m.Find(""); !errors.Is(err, ErrUsage) {
		t.Errorf("Find(\"\"): %v", err)
	}
	if _, err := m.Find("3"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("Find of a corrupt record: %v", err)
	}
	if _, err := m.Find("nope\x1b[2J"); err == nil || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("a name with a control character comes back as it is: %q", err)
	}
}

func TestRefreshKeepsLiveShells(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, running("1"), "")
	// Being started right now: no supervisor yet.
	writeRecord(t, m, &Meta{ID: "2", Status: StatusStarting, StartedAt: time.Now()}, "")
	for id, want := range map[string]string{"1": StatusRunning, "2": StatusStarting} {
		meta, err := m.Find(id)
		if err != nil || meta.Status != want {
			t.Errorf("shell %s: %v %v, want %s", id, meta, err, want)
		}
	}
	if meta, _ := m.Find("1"); !strings.HasPrefix(meta.StatusLine, "running for ") {
		t.Errorf("status line: %q", meta.StatusLine)
	}
}

func TestClean(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 0), "out\n")
	writeRecord(t, m, running("2"), "")
	writeRecord(t, m, exited("3", 1), "")
	n, err := m.Clean()
	if err != nil || n != 2 {
		t.Fatalf("Clean: %d, %v; want 2", n, err)
	}
	var left []string
	for _, meta := range m.List() {
		left = append(left, meta.ID)
	}
	if fmt.Sprint(left) != "[2]" {
		t.Errorf("left: %v", left)
	}
	if _, err := os.Stat(filepath.Join(m.Dir(), "shells", "1")); !os.IsNotExist(err) {
		t.Errorf("shell 1's folder: %v", err)
	}
	if n, err := m.Clean(); n != 0 || err != nil {
		t.Errorf("again: %d, %v", n, err)
	}
}

func TestNextIDFromTheCounter(t *testing.T) {
	m := testManager(t)
	next := func() string {
		t.Helper()
		var id string
		if err := m.withLock(func() (err error) { id, err = m.nextID(); return err }); err != nil {
			t.Fatal(err)
		}
		return id
	}
	// A slice, not a map: each case checks the counter its id left behind.
	for _, c := range []struct{ counter, id, after string }{
		{"garbage", "1", "2\n"},
		{"41\n", "41", "42\n"},
		{"0", "1", "2\n"},
		{"-3", "1", "2\n"},
		{"999999999", "1", "2\n"},
	} {
		if err := m.dir.WriteFile(nextIDName, []byte(c.counter), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := next(); got != c.id {
			t.Errorf("counter %q: id %s, want %s", c.counter, got, c.id)
		}
		if b, _ := m.dir.ReadFile(nextIDName, 64); string(b) != c.after {
			t.Errorf("counter %q: left %q, want %q", c.counter, b, c.after)
		}
	}
}

// TestLockBusy holds the state dir's lock on another descriptor: a second
// taker gives up after lockWait (10 s), naming the holder.
func TestLockBusy(t *testing.T) {
	t.Parallel()
	m := testManager(t)
	unlock, err := lockIn(m.dir, lockName, "the state dir")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ran := false
	err = m.withLock(func() error { ran = true; return nil })
	if !errors.Is(err, ErrBusy) || ran {
		t.Fatalf("a held lock: %v (ran %v)", err, ran)
	}
	if want := fmt.Sprintf("locked by pid %d", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("%q does not say %q", err, want)
	}
	unlock()
	if err := m.withLock(func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("after the unlock: %v, ran %v", err, ran)
	}
}
