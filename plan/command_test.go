package plan

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCommandOf(t *testing.T) {
	for _, c := range []struct {
		words   []string
		command string
		argv    []string
	}{
		{[]string{"echo $HOME && ls"}, "echo $HOME && ls", nil},
		{[]string{"echo", "$HOME"}, "echo '$HOME'", []string{"echo", "$HOME"}},
		{[]string{"python3", "-c", "import time; time.sleep(1)"}, "python3 -c 'import time; time.sleep(1)'", []string{"python3", "-c", "import time; time.sleep(1)"}},
		{[]string{"printf", "%s\n", "it's", ""}, "printf '%s\n' 'it'\\''s' ''", []string{"printf", "%s\n", "it's", ""}},
		{[]string{"go", "test", "./...", "-run=X,Y"}, "go test ./... -run=X,Y", []string{"go", "test", "./...", "-run=X,Y"}},
	} {
		command, argv, err := commandOf(c.words, "cshell run -- COMMAND")
		if err != nil || command != c.command || !slices.Equal(argv, c.argv) {
			t.Errorf("commandOf(%q) = %q, %q, %v; want %q, %q", c.words, command, argv, err, c.command, c.argv)
		}
	}
	for _, words := range [][]string{nil, {""}, {"  "}, {"", "x"}, {"a\x00b"}, {"a", "b\x00"}, {strings.Repeat("x", maxCommand+1)}, {"a", strings.Repeat("x", maxCommand+1)}} {
		if _, _, err := commandOf(words, "cshell run -- COMMAND"); !errors.Is(err, ErrUsage) {
			t.Errorf("commandOf(%.40q) = %v, want a usage error", words, err)
		}
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = strings.Repeat("x", maxCommand-10)
	}
	if _, _, err := commandOf(many, "u"); !errors.Is(err, ErrUsage) {
		t.Errorf("words past %d bytes together: %v, want a usage error", maxArgv, err)
	}
}
