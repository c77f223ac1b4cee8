package shells

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

func TestStartedLinesOfARunningShell(t *testing.T) {
	meta := running("3")
	meta.Pid, meta.Name, meta.Log = 1234, "web", "/state/shells/3/output.log"
	meta.Exposed = []Exposed{{Listen: "127.0.0.1:5173", Port: 5173}}
	s := &Started{Meta: meta, Waited: true, ReadyAfter: 1500 * time.Millisecond}
	want := "started shell 3 (pid 1234)\nname: web\nlog: /state/shells/3/output.log\nexposed: 127.0.0.1:5173 -> 5173\nready after 1.5s\n"
	if got := s.Lines(); got != want {
		t.Errorf("Lines:\n%q\nwant\n%q", got, want)
	}
	a := s.Answer()
	if a.ID != "3" || a.Status != StatusRunning || a.Pid != 1234 || a.ReadySeconds == nil || *a.ReadySeconds != 1.5 ||
		a.ExitCode != nil || a.Output != nil || a.ExposedDirectly || len(a.Exposed) != 1 {
		t.Errorf("Answer: %+v", a)
	}
	// Shared network: the ports are reached directly.
	s.Direct, s.NotReady = true, ErrNotReady
	if got := s.Lines(); !strings.Contains(got, "exposed: 127.0.0.1:5173 -> 5173 (no relay: the shell shares this machine's network") || strings.Contains(got, "ready after") {
		t.Errorf("Lines of a direct shell not ready: %q", got)
	}
	if a := s.Answer(); !a.ExposedDirectly || a.ReadySeconds != nil {
		t.Errorf("Answer of a direct shell not ready: %+v", a)
	}
	// Nothing exposed: an empty list, never null.
	s = &Started{Meta: running("4")}
	if a := s.Answer(); a.Exposed == nil || len(a.Exposed) != 0 || a.ExposedDirectly {
		t.Errorf("Answer without exposes: %+v", a)
	}
	if got := s.Lines(); strings.Contains(got, "name:") || strings.Contains(got, "exposed") {
		t.Errorf("Lines without a name: %q", got)
	}
}

func TestStartedLinesOfAShellThatEnded(t *testing.T) {
	meta := exited("5", 127)
	meta.Log = "/l"
	s := &Started{Meta: meta, Output: "bash: nope: command not found\n"}
	want := "shell 5 exited with 127 after 2s\nlog: /l\nbash: nope: command not found\n"
	if got := s.Lines(); got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	s.Waited = true
	if got := s.Lines(); !strings.HasPrefix(got, "shell 5 exited with 127 after 2s before it was ready\n") {
		t.Errorf("Lines after a wait = %q", got)
	}
	a := s.Answer()
	if a.ExitCode == nil || *a.ExitCode != 127 || a.StatusLine == nil || *a.StatusLine != meta.StatusLine ||
		a.Output == nil || *a.Output != s.Output || a.Signal == nil || a.ReadySeconds != nil {
		t.Errorf("Answer: %+v", a)
	}
}

func TestNewMeta(t *testing.T) {
	p := &plan.Plan{Name: "db", Session: "s", Command: "run db", Description: "the database", Isolation: container.Container,
		Timeout: 90 * time.Second, AllowUserNamespaces: true, Limits: policy.Limits{Memory: 1 << 30},
		Exposes: []plan.Expose{{Listen: netip.MustParseAddrPort("127.0.0.1:5432"), Port: 5432}}}
	p.FS.Workdir = "/w"
	p.Network.Allow = []policy.HostPattern{mustPattern(t, "*.example.com")}
	meta := newMeta("8", p, "/log")
	if meta.ID != "8" || meta.Name != "db" || meta.Session != "s" || meta.Status != StatusStarting || meta.Workdir != "/w" ||
		meta.Isolation != "container" || meta.Timeout != 90 || !meta.AllowUserns || meta.Limits == nil || meta.Limits.Memory != 1<<30 ||
		len(meta.Exposed) != 1 || meta.Exposed[0] != (Exposed{Listen: "127.0.0.1:5432", Port: 5432}) ||
		len(meta.AllowHosts) != 1 || meta.AllowHosts[0] != "*.example.com" || meta.Log != "/log" || meta.Description != "the database" {
		t.Errorf("newMeta: %+v", meta)
	}
	if meta := newMeta("9", &plan.Plan{}, "/log"); meta.Limits != nil || meta.Exposed == nil {
		t.Errorf("no limits, no exposes: %+v", meta)
	}
}

func mustPattern(t *testing.T, s string) policy.HostPattern {
	t.Helper()
	p, err := policy.ParseHostPattern(s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAllocate(t *testing.T) {
	m := testManager(t)
	p := &plan.Plan{Name: "web", Session: "default", Namespaced: true,
		Exposes: []plan.Expose{{Listen: netip.MustParseAddrPort("127.0.0.1:8080"), Port: 8080}}}
	meta, err := m.allocate(p)
	if err != nil {
		t.Fatal(err)
	}
	if meta.ID != "1" || meta.Status != StatusStarting {
		t.Errorf("allocated %+v", meta)
	}
	for _, f := range []string{"shells/1/meta.json", "shells/1/output.log", "shells/1/violations.log", "exposing/1"} {
		if _, err := os.Lstat(filepath.Join(m.Dir(), f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Its name is taken while it runs (it is starting).
	if _, err := m.allocate(p); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `(1) is already named "web"`) {
		t.Errorf("the same name again: %v", err)
	}
	p.Name = ""
	p.MaxConcurrent = 2
	if meta, err := m.allocate(p); err != nil || meta.ID != "2" {
		t.Errorf("a second shell: %v %v", meta, err)
	}
	if _, err := m.allocate(p); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "2 shells are running") {
		t.Errorf("past the limit: %v", err)
	}
	// Finished shells do not count, nor keep their names.
	for _, id := range []string{"1", "2"} {
		endShell(t, m, id)
	}
	p.Name = "web"
	if meta, err := m.allocate(p); err != nil || meta.ID != "3" {
		t.Errorf("after the ends: %v %v", meta, err)
	}
}

func TestEnded(t *testing.T) {
	m := testManager(t)
	writeRecord(t, m, exited("1", 1), "error: it broke\n")
	meta, out := m.Ended("1")
	if meta == nil || meta.ID != "1" || out != "error: it broke\n" {
		t.Errorf("Ended: %v %q", meta, out)
	}
	// The last 64 KiB only.
	writeRecord(t, m, exited("2", 1), strings.Repeat("a", maxRead)+"the end\n")
	if _, out := m.Ended("2"); len(out) != maxRead || !strings.HasSuffix(out, "the end\n") {
		t.Errorf("Ended of a long log: %d bytes", len(out))
	}
	if meta, out := m.Ended("3"); meta != nil || out != "" {
		t.Errorf("Ended of no shell: %v %q", meta, out)
	}
}

func TestDefaultSession(t *testing.T) {
	t.Setenv("CSHELL_SESSION", "")
	if s := DefaultSession(); s != "default" {
		t.Errorf("DefaultSession = %q", s)
	}
	t.Setenv("CSHELL_SESSION", "proj")
	if s := DefaultSession(); s != "proj" {
		t.Errorf("DefaultSession = %q", s)
	}
	for s, ok := range map[string]bool{"proj": true, "a/b": false, "..": false, "": false, strings.Repeat("s", 65): false} {
		if err := CheckSession(s); (err == nil) != ok {
			t.Errorf("CheckSession(%q): %v", s, err)
		}
	}
}

func TestRelayed(t *testing.T) {
	if relayed(container.Process) || !relayed(container.Container) || relayed(container.Auto) != container.DefaultIsNamespaced() {
		t.Error("relayed")
	}
	if relayed(container.Isolation("bogus")) {
		t.Error("an unknown isolation is relayed")
	}
}
