package shells

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
)

func TestDescribeViolation(t *testing.T) {
	for _, tc := range []struct {
		v    policy.Violation
		want string
	}{
		{policy.Violation{Method: "memory", Rule: "killed node (pid 7)"}, "killed node (pid 7)"},
		{policy.Violation{Method: "write", Rule: "/usr is read-only"}, "refused write: /usr is read-only"},
		{policy.Violation{Method: "write", Rule: "/usr is read-only", Hint: "add --rw /usr"}, "refused write: /usr is read-only; add --rw /usr"},
		{policy.Violation{Method: "unshare", Rule: "no user namespaces"}, "refused unshare(CLONE_NEWUSER) (no user namespaces)"},
		{policy.Violation{Method: "clone", Rule: "no user namespaces", Hint: "use --allow-userns"}, "refused clone(CLONE_NEWUSER) (no user namespaces); use --allow-userns"},
		{policy.Violation{Rule: "violations.log is full"}, "violations.log is full"},
		{policy.Violation{Method: "DNS", Host: "x.example", Rule: "not allowed"}, "refused to resolve x.example (not allowed)"},
		{policy.Violation{Method: "DNS", Host: "x.example", Rule: "not allowed", Hint: "add --allow-host x.example"}, "refused to resolve x.example (not allowed); add --allow-host x.example"},
		{policy.Violation{Method: "CONNECT", Host: "x.example", Port: 443, Rule: "not allowed"}, "refused CONNECT x.example:443 (not allowed)"},
		{policy.Violation{Method: "GET", Host: "x.example", Port: 80, Rule: "denied", Hint: "h"}, "refused GET x.example:80 (denied); h"},
	} {
		if got := describeViolation(tc.v); got != tc.want {
			t.Errorf("describeViolation(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestViolationLogIsBounded(t *testing.T) {
	dir := t.TempDir()
	d := testDir(t, dir)
	record := violationLog(d)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	record(policy.Violation{Time: at, Host: "a.example", Port: 443, Method: "CONNECT", Rule: "not allowed"})
	b, err := os.ReadFile(filepath.Join(dir, violationsName))
	if err != nil {
		t.Fatal(err)
	}
	var v policy.Violation
	if err := json.Unmarshal(b, &v); err != nil || v.Host != "a.example" || !v.Time.Equal(at) || !bytes.HasSuffix(b, []byte("\n")) {
		t.Fatalf("the first line %q: %v", b, err)
	}
	// Grown near the bound, the log takes a last line saying it is full,
	// then nothing more.
	if err := os.WriteFile(filepath.Join(dir, violationsName), bytes.Repeat([]byte("x"), maxViolationsLog-10), 0o600); err != nil {
		t.Fatal(err)
	}
	record(policy.Violation{Time: at, Host: "b.example", Port: 443, Method: "CONNECT", Rule: "not allowed"})
	record(policy.Violation{Time: at, Host: "c.example", Port: 443, Method: "CONNECT", Rule: "not allowed"})
	b, _ = os.ReadFile(filepath.Join(dir, violationsName))
	tail := string(b[maxViolationsLog-10:])
	if strings.Contains(tail, "example") || !strings.Contains(tail, "violations.log is full (1 MiB)") || strings.Count(tail, "\n") != 1 {
		t.Errorf("past the bound: %q", tail)
	}
}

func TestRecordAndTell(t *testing.T) {
	var recorded []string
	var told []string
	f := recordAndTell(func(v policy.Violation) { recorded = append(recorded, v.Rule) },
		func(host string, port int) { told = append(told, host) })
	f(policy.Violation{Host: "a.example", Port: 1, Rule: "r1"})
	f(policy.Violation{Method: "unshare", Rule: "r2"}) // no host: recorded only
	if strings.Join(recorded, ",") != "r1,r2" || strings.Join(told, ",") != "a.example" {
		t.Errorf("recorded %v, told %v", recorded, told)
	}
}

func TestViolationNote(t *testing.T) {
	var buf bytes.Buffer
	note := violationNote(&buf, nil, "s")
	note(policy.Violation{Method: "CONNECT", Host: "a.example", Port: 443, Rule: "not allowed"})
	note(policy.Violation{Method: "write", Rule: "/usr is read-only"})
	want := "cshell: refused CONNECT a.example:443 (not allowed)\ncshell: refused write: /usr is read-only\n"
	if buf.String() != want {
		t.Errorf("notes %q, want %q", buf.String(), want)
	}
}

// A model reads a refused host's hint in its own words: the command its
// user runs, not a flag it cannot pass; a hint with no pattern stays.
func TestViolationInWords(t *testing.T) {
	words := &plan.Words{Allow: func(session, pattern string) string { return "ask: cshell allow --session " + session + " " + pattern }}
	var buf bytes.Buffer
	note := violationNote(&buf, words, "mcp-7")
	note(policy.NewViolation("a.example", 443, "CONNECT", policy.Reason{Text: "not in the allow list", Hint: "allow it with --allow-host a.example", Allow: "a.example"}))
	note(policy.NewViolation("b.example", 443, "CONNECT", policy.Reason{Text: "network.deny", Hint: "a deny stays"}))
	want := "cshell: refused CONNECT a.example:443 (not in the allow list); ask: cshell allow --session mcp-7 a.example\n" +
		"cshell: refused CONNECT b.example:443 (network.deny); a deny stays\n"
	if buf.String() != want {
		t.Errorf("notes %q, want %q", buf.String(), want)
	}
	buf.Reset()
	violationNote(&buf, nil, "s")(policy.NewViolation("a.example", 443, "CONNECT", policy.Reason{Text: "t", Hint: "allow it with --allow-host a.example", Allow: "a.example"}))
	if !strings.Contains(buf.String(), "--allow-host a.example") {
		t.Errorf("the command line's words: %q", buf.String())
	}
}
