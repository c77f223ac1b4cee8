package shells

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/policy"
)

func TestValidID(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "42": true, "999999999": true,
		"": false, "0": false, "01": false, "-1": false, "+1": false, "1a": false, "1.0": false,
		"..": false, "1/2": false, "1000000000": false, " 1": false, "١": false,
	} {
		if got := validID(s); got != want {
			t.Errorf("validID(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestShellFile(t *testing.T) {
	if got := shellFile("3"); got != "shells/3" {
		t.Errorf("shellFile(3) = %q", got)
	}
	if got := shellFile("3", metaName); got != "shells/3/meta.json" {
		t.Errorf("shellFile(3, meta) = %q", got)
	}
}

func TestStatusLinesOfLimitsAndRunning(t *testing.T) {
	start := mustTime("2026-01-01T00:00:00Z")
	end := mustTime("2026-01-01T00:00:01.2Z")
	for _, tc := range []struct {
		m    Meta
		now  time.Time
		want string
	}{
		{Meta{Status: StatusStarting}, end, "starting"},
		{Meta{Status: StatusRunning}, start.Add(90 * time.Second), "running for 90s"},
		{Meta{Status: StatusRunning}, start.Add(1500 * time.Millisecond), "running for 1.5s"},
		{Meta{Status: StatusExited}, end, "exited with 0 after 1.2s"},  // no code recorded: 0
		{Meta{Status: StatusKilled}, end, "killed by KILL after 1.2s"}, // no signal recorded: KILL
		{Meta{Status: StatusKilled, LimitHit: "memory", Limits: &policy.Limits{Memory: 64 << 20}}, end, "killed: memory limit (64 MiB) reached after 1.2s"},
		{Meta{Status: StatusKilled, LimitHit: "pids", Limits: &policy.Limits{Pids: 50}}, end, "killed: process limit (50) reached after 1.2s"},
		{Meta{Status: StatusKilled, LimitHit: "memory"}, end, "killed: memory limit (0 bytes) reached after 1.2s"},
		{Meta{Status: StatusTimedOut, Timeout: 0.5}, end, "timed out after 0.5s"},
	} {
		m := tc.m
		m.StartedAt = start
		if m.Status != StatusRunning && m.Status != StatusStarting {
			m.EndedAt = &end
		}
		m.fill(tc.now)
		if m.StatusLine != tc.want {
			t.Errorf("%+v: %q, want %q", tc.m, m.StatusLine, tc.want)
		}
	}
	// No start recorded: no runtime either.
	m := Meta{Status: StatusRunning}
	m.fill(end)
	if m.RuntimeSeconds != 0 || m.StatusLine != "running for 0s" {
		t.Errorf("without a start: %v, %q", m.RuntimeSeconds, m.StatusLine)
	}
}

func TestFinishedAndExitStatus(t *testing.T) {
	for status, want := range map[string]bool{StatusStarting: false, StatusRunning: false, StatusExited: true,
		StatusKilled: true, StatusTimedOut: true, StatusLost: true} {
		if got := (&Meta{Status: status}).Finished(); got != want {
			t.Errorf("Finished(%s) = %v", status, got)
		}
	}
	code := 143
	if got := (&Meta{Status: StatusKilled, ExitCode: &code}).ExitStatus(); got != 143 {
		t.Errorf("ExitStatus = %d, want 143", got)
	}
	if got := (&Meta{Status: StatusLost}).ExitStatus(); got != 1 {
		t.Errorf("ExitStatus of a lost shell = %d, want 1", got)
	}
}

func TestMetaRoundTrip(t *testing.T) {
	m := testManager(t)
	meta := exited("7", 3)
	meta.Name, meta.Exposed = "web", []Exposed{{Listen: "127.0.0.1:8080", Port: 8080}}
	writeRecord(t, m, meta, "")
	got, err := m.readMeta("7")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "web" || *got.ExitCode != 3 || got.StatusLine != "exited with 3 after 2s" || len(got.Exposed) != 1 || got.Exposed[0].Port != 8080 {
		t.Errorf("read back: %+v", got)
	}
	st, err := os.Stat(filepath.Join(m.Dir(), "shells", "7", "meta.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("meta.json: %v %v", st, err)
	}
}

func TestReadMetaRefuses(t *testing.T) {
	m := testManager(t)
	if _, err := m.readMeta("../x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a bad id: %v", err)
	}
	if _, err := m.readMeta("5"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing record: %v", err)
	}
	for id, content := range map[string]string{
		"1": "{not json",
		"2": `{"id": "3", "status": "running"}`, // a record whose id is not its folder's
	} {
		if err := m.dir.Mkdir(shellFile(id), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := m.dir.WriteFile(shellFile(id, metaName), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := m.readMeta(id)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Join("shells", id, "meta.json")) {
			t.Errorf("record %s (%s): %v", id, content, err)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	for in, want := range map[float64]string{0: "0s", 3: "3s", 2.5: "2.5s", 0.1: "0.1s", 3600: "3600s"} {
		if got := formatSeconds(in); got != want {
			t.Errorf("formatSeconds(%v) = %q, want %q", in, got, want)
		}
	}
	if orDefault("", "d") != "d" || orDefault("x", "d") != "x" {
		t.Error("orDefault")
	}
}
