package container

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseIsolation(t *testing.T) {
	for in, want := range map[string]Isolation{"auto": Auto, "container": Container, "PROCESS": Process} {
		if got, err := ParseIsolation(in); err != nil || got != want {
			t.Errorf("ParseIsolation(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "bogus", "docker"} {
		if _, err := ParseIsolation(in); !errors.Is(err, ErrBadIsolation) {
			t.Errorf("ParseIsolation(%q) = %v, want ErrBadIsolation", in, err)
		}
	}
}

func TestShellArgs(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/bash", nil }
	missing := func(string) (string, error) { return "", errors.New("no") }
	if got := shellArgs(found, "echo hi"); !reflect.DeepEqual(got, []string{"/usr/bin/bash", "-c", "echo hi"}) {
		t.Errorf("with bash: %q", got)
	}
	if got := shellArgs(missing, "echo hi"); !reflect.DeepEqual(got, []string{"/bin/sh", "-c", "echo hi"}) {
		t.Errorf("without bash: %q", got)
	}
}
