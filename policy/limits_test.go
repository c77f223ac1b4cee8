package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"512m": 512 << 20, "2g": 2 << 30, "2G": 2 << 30, "1.5g": 3 << 29, "64MiB": 64 << 20,
		"64mb": 64 << 20, "4096k": 4 << 20, "1t": 1 << 40, "8388608": 8 << 20, " 64m ": 64 << 20,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "bogus", "-1g", "0", "1m", "3m", "inf", "NaN", "0x10m", "1e400", "2 g", "1_000m", "2pb"} {
		if got, err := ParseSize(in); !errors.Is(err, ErrLimit) {
			t.Errorf("ParseSize(%q) = %d, %v; want ErrLimit", in, got, err)
		}
	}
	for n, want := range map[int64]string{64 << 20: "64 MiB", 3 << 29: "1.5 GiB", 512 << 10: "512 KiB", 100: "100 bytes"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitsLayering(t *testing.T) {
	global, err := Parse("g.json", []byte(`{"limits": {"memory": "2g", "pids": 1024}, "sandbox": {"allowUserNamespaces": false}}`))
	if err != nil {
		t.Fatal(err)
	}
	proj, err := Parse("p.json", []byte(`{"limits": {"memory": "4g", "pids": 64, "cpus": 1}, "sandbox": {"allowUserNamespaces": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, warn := Layer(global, proj, ProjectFile)
	if l := c.Limits(); l.Memory != 2<<30 || l.Pids != 64 || l.CPUs != 1 || c.AllowUserNamespaces() {
		t.Errorf("limits %+v, userns %v", l, c.AllowUserNamespaces())
	}
	joined := strings.Join(warn, "\n")
	if !strings.Contains(joined, "limits.memory=4 GiB (global: 2 GiB)") || !strings.Contains(joined, "sandbox.allowUserNamespaces=true") || len(warn) != 2 {
		t.Errorf("warnings %q", warn)
	}
	if got := (Limits{Memory: 1 << 30, Pids: 10}).Lower(Limits{Memory: 2 << 30, CPUs: 0.5}); got != (Limits{Memory: 1 << 30, Pids: 10, CPUs: 0.5}) {
		t.Errorf("Lower: %+v", got)
	}
	for _, bad := range []string{`{"limits": {"memory": "lots"}}`, `{"limits": {"pids": 0}}`, `{"limits": {"cpus": 0}}`, `{"limits": {"disk": 1}}`, `{"sandbox": {"allowUserNamespaces": "yes"}}`} {
		if _, err := Parse("c.json", []byte(bad)); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
