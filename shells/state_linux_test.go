package shells

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
)

// trustRecord is where the runtime dir remembers the state dir at abs.
func trustRecord(t *testing.T, abs string) string {
	t.Helper()
	rt, err := container.RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(rt, trustRecords, hex.EncodeToString(sum[:16]))
}

func TestOpenClosesTheStateDirToOthers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	t.Cleanup(func() { forgetTrust(path) })
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", st.Mode().Perm())
	}
}

func TestOpenRefusesALink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	// Refused, and nothing is made where it leads. (The sentence is not
	// the one openStateDir has for links: Linux answers ENOTDIR, not
	// ELOOP, to O_DIRECTORY|O_NOFOLLOW on a link; see the report.)
	if _, err := Open(filepath.Join(dir, "state"), nil); err == nil {
		t.Fatal("a state dir that is a link was opened")
	}
	if names, _ := os.ReadDir(filepath.Join(dir, "real")); len(names) != 0 {
		t.Errorf("made through the link: %v", names)
	}
}

// TestOpenRefusesAReplacedStateDir: a directory made where the state dir
// was (as a shell that could rename a parent might) is not trusted.
func TestOpenRefusesAReplacedStateDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	m, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	record := trustRecord(t, path)
	t.Cleanup(func() { forgetTrust(path) })
	if _, err := os.Stat(record); err != nil {
		t.Fatalf("no record of the state dir: %v", err)
	}
	if err := os.Rename(path, path+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, nil)
	if !errors.Is(err, ErrStateDir) || !strings.Contains(err.Error(), "is not the directory cshell made there") || !strings.Contains(err.Error(), record) {
		t.Fatalf("a replaced state dir: %v", err)
	}
	// Removing the record, as the sentence says, trusts it again.
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	m, err = Open(path, nil)
	if err != nil {
		t.Fatalf("after the record was removed: %v", err)
	}
	m.Close()
}

// TestForgetGone: records of state dirs that no longer exist go when a
// new one is written; others stay.
func TestForgetGone(t *testing.T) {
	root := t.TempDir()
	gone, kept, fresh := filepath.Join(root, "gone"), filepath.Join(root, "kept"), filepath.Join(root, "fresh")
	for _, p := range []string{gone, kept} {
		m, err := Open(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	t.Cleanup(func() {
		for _, p := range []string{gone, kept, fresh} {
			forgetTrust(p)
		}
	})
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	m, err := Open(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, err := os.Stat(trustRecord(t, gone)); !os.IsNotExist(err) {
		t.Errorf("the gone state dir's record: %v", err)
	}
	if _, err := os.Stat(trustRecord(t, kept)); err != nil {
		t.Errorf("the kept state dir's record: %v", err)
	}
}

func TestRefreshMarksLostShells(t *testing.T) {
	m := testManager(t)
	// Its supervisor's pid now names another process (this one, started
	// at another time): the supervisor is gone.
	meta := running("1")
	meta.SupervisorTime++
	writeRecord(t, m, meta, "")
	if err := m.markExposing("1"); err != nil {
		t.Fatal(err)
	}
	// Started long ago, and no supervisor ever recorded itself.
	writeRecord(t, m, &Meta{ID: "2", Status: StatusStarting, StartedAt: time.Now().Add(-time.Hour)}, "")
	for _, id := range []string{"1", "2"} {
		got, err := m.Find(id)
		if err != nil || got.Status != StatusLost || got.StatusLine != "lost (its supervisor died)" || got.EndedAt == nil || got.ExitStatus() != 1 {
			t.Errorf("shell %s: %+v, %v", id, got, err)
		}
		if rec, _ := m.readMeta(id); rec.Status != StatusLost {
			t.Errorf("shell %s's record says %s", id, rec.Status)
		}
	}
	if _, err := os.Lstat(filepath.Join(m.Dir(), exposingName, "1")); !os.IsNotExist(err) {
		t.Errorf("a lost shell keeps its exposing mark: %v", err)
	}
	// Lost shells are finished: clean removes them, kill has nothing to do.
	r, err := m.Kill(context.Background(), "1", 15, 0)
	if err != nil || !r.AlreadyFinished {
		t.Errorf("Kill of a lost shell: %+v %v", r, err)
	}
	if n, err := m.Clean(); n != 2 || err != nil {
		t.Errorf("Clean: %d %v", n, err)
	}
}

func TestReachesDropsTheMarksOfLostShells(t *testing.T) {
	m := testManager(t)
	meta := running("1")
	meta.SupervisorTime++
	writeRecord(t, m, meta, "")
	if err := m.markExposing("1"); err != nil {
		t.Fatal(err)
	}
	if rs := m.reaches("default"); len(rs) != 0 {
		t.Errorf("a lost shell is reached: %v", rs)
	}
	if _, err := os.Lstat(filepath.Join(m.Dir(), exposingName, "1")); !os.IsNotExist(err) {
		t.Errorf("its mark: %v", err)
	}
}

// sleeper starts a process of this test's that runs until killed.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func TestProcessAlive(t *testing.T) {
	me := os.Getpid()
	if !processAlive(me, processStartTime(me)) || !processAlive(me, 0) {
		t.Error("this process is not alive")
	}
	if processAlive(me, processStartTime(me)+1) {
		t.Error("another process's start time is taken for this one's")
	}
	cmd := sleeper(t)
	pid := cmd.Process.Pid
	start := processStartTime(pid)
	if start == 0 || !processAlive(pid, start) {
		t.Fatalf("a running child: start %d", start)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if processAlive(pid, start) {
		t.Error("a reaped child is alive")
	}
}

func TestWatchProcess(t *testing.T) {
	cmd := sleeper(t)
	gone := watchProcess(context.Background(), cmd.Process.Pid)
	select {
	case <-gone:
		t.Fatal("gone while it runs")
	default:
	}
	cmd.Process.Kill()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatal("its end went unnoticed")
	}
	// A watch ends with its context.
	other := sleeper(t)
	ctx, cancel := context.WithCancel(context.Background())
	gone = watchProcess(ctx, other.Process.Pid)
	cancel()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatal("the watch outlived its context")
	}
}

func TestPollProcess(t *testing.T) {
	cmd := sleeper(t)
	done := make(chan struct{})
	go func() {
		pollProcess(context.Background(), cmd.Process.Pid)
		close(done)
	}()
	cmd.Process.Kill()
	cmd.Wait()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the poll did not see the end")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pollProcess(ctx, os.Getpid()) // returns at once
}

func TestDoctorTellsOfTheCaches(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("CSHELL_CACHE_DIR", "")
	check := func(home string) container.Check {
		t.Helper()
		r := Doctor(home)
		for _, c := range r.Checks {
			if c.Name == "caches" {
				return c
			}
		}
		t.Fatalf("no caches check in %+v", r.Checks)
		return container.Check{}
	}
	if c := check(""); !c.OK || !strings.Contains(c.Detail, "no cache folder") {
		t.Errorf("without a home: %+v", c)
	}
	home := t.TempDir()
	if c := check(home); !c.OK || !strings.Contains(c.Detail, filepath.Join(home, ".cache", "cshell")) || !strings.Contains(c.Detail, "(0 so far") {
		t.Errorf("with a home: %+v", c)
	}
	// A cache folder that cannot be one.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CSHELL_CACHE_DIR", filepath.Join(file, "cshell"))
	if c := check(home); c.OK || !strings.Contains(c.Detail, "shells run without package caches") {
		t.Errorf("a cache folder under a file: %+v", c)
	}
}

// A record written in another runtime dir (an image in which cshell ran
// while it was built) is set aside with a note; one of this runtime dir
// that does not match, or of the format before runtime dirs were named,
// is refused as ever.
func TestARecordFromAnotherRuntimeDirIsSetAside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	m, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	record := trustRecord(t, path)
	t.Cleanup(func() { forgetTrust(path); os.Remove(record + ".set-aside") })
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	dirLine, rtLine, _ := strings.Cut(string(b), "\n")
	if !strings.HasPrefix(rtLine, "runtime ") {
		t.Fatalf("the record names no runtime dir: %q", b)
	}
	fields := strings.Fields(dirLine)
	stale := "1 " + fields[1] + " " + fields[2] + "\n" // another device: another state dir
	for _, tc := range []struct {
		record string
		ok     bool
	}{
		{stale + "runtime 1 2\n", true}, // another runtime dir
		{stale + rtLine, false},         // this runtime dir: replaced or moved
		{stale, false},                  // no runtime dir named: as before
	} {
		if err := os.WriteFile(record, []byte(tc.record), 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := Open(path, nil)
		switch {
		case tc.ok && err != nil:
			t.Errorf("record %q: %v", tc.record, err)
		case tc.ok && (len(m.Notes) != 1 || !strings.Contains(m.Notes[0], "was written in another runtime dir")):
			t.Errorf("record %q: notes %q", tc.record, m.Notes)
		case tc.ok:
			if set, _ := os.ReadFile(record + ".set-aside"); string(set) != tc.record {
				t.Errorf("set aside %q, want %q", set, tc.record)
			}
			if now, _ := os.ReadFile(record); string(now) != string(b) {
				t.Errorf("recorded anew %q, want %q", now, b)
			}
		case err == nil || !errors.Is(err, ErrStateDir):
			t.Errorf("record %q: opened (%v)", tc.record, err)
		}
		if m != nil {
			m.Close()
		}
	}
}
