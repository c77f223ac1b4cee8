package shells

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestGrantsFile(t *testing.T) {
	m, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	read := m.grantsFor("s1", "3")
	if got := read(); len(got) != 0 {
		t.Fatalf("grants before any: %v", got)
	}
	kept, err := m.Allow("s1", []string{"API.Example.", "*.github.com", "10.0.0.1:80"})
	if err != nil || len(kept) != 3 || kept[0] != "api.example" {
		t.Fatalf("Allow: %v %v", kept, err)
	}
	if _, err := m.Allow("s1", []string{"api.example"}); err != nil { // again: kept once
		t.Fatal(err)
	}
	if _, err := m.Allow("s2", []string{"other.example"}); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 3 {
		t.Errorf("the shell's grants: %v", got)
	}
	if n := len(m.Grants("")); n != 4 {
		t.Errorf("every session's grants: %d", n)
	}
	// An answer for one shell, and one that has run out.
	if err := m.Answer("s1", "3", "once.example:443", false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := m.Answer("s1", "4", "theirs.example:443", false, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := m.Answer("s1", "3", "gone.example:443", false, -time.Second); err != nil {
		t.Fatal(err)
	}
	got := read()
	var names []string
	for _, g := range got {
		names = append(names, g.Pattern.String())
	}
	if len(got) != 4 || names[3] != "once.example:443" {
		t.Errorf("after the answers: %v", names)
	}
	if err := m.Revoke("s1", []string{"api.example"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Revoke("s1", []string{"api.example"}); !errors.Is(err, ErrNotGranted) {
		t.Errorf("revoking twice: %v", err)
	}
	if len(read()) != 3 {
		t.Errorf("after a revoke: %v", read())
	}
	for _, bad := range [][]string{nil, {"a b"}, {"*"}} {
		if _, err := m.Allow("s1", bad); !errors.Is(err, ErrUsage) {
			t.Errorf("Allow(%q): %v", bad, err)
		}
	}
	if _, err := m.Allow("a/b", []string{"x.example"}); !errors.Is(err, ErrUsage) {
		t.Errorf("a bad session: %v", err)
	}
	// A file nobody can read is no grant, never an error.
	if err := os.WriteFile(filepath.Join(m.Dir(), grantsName), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 0 {
		t.Errorf("a garbled file: %v", got)
	}
}
