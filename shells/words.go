package shells

import "fmt"

// Words name, in cshell's sentences, what the user is told to type: the
// command line's flags and commands, or an MCP server's tool arguments.
// A nil *Words means the command line's.
type Words struct {
	Expose       string // the option that exposes a port
	ExposePublic string // its consent to a public address; "" when there is none
	Name         string // the option that names a shell
	// ReadFrom tells how to read a shell's output from a byte.
	ReadFrom func(id string, from int64) string
	// Show tells how to see what a shell printed.
	Show func(id string) string
}

// CLIWords are the command line's.
var CLIWords = &Words{
	Expose: "--expose", ExposePublic: "--expose-public", Name: "--name",
	ReadFrom: func(id string, from int64) string { return fmt.Sprintf("cshell output %s --from-byte %d", id, from) },
	Show:     func(id string) string { return "cshell output " + id },
}

func wordsOr(w *Words) *Words {
	if w == nil {
		return CLIWords
	}
	return w
}
