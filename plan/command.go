package plan

import (
	"strings"
)

// maxCommand is the longest word: bash -c gets a command line as one
// argument, and Linux caps one at 128 KiB (MAX_ARG_STRLEN) with room left
// for the rest.
const maxCommand = 128<<10 - 1

// maxArgv bounds the arguments given as they are, together: the kernel
// takes about 2 MiB of arguments and environment at an exec.
const maxArgv = 1 << 20

// commandOf reads the words after --: one word is a shell command line
// (bash -c), several are a program and its arguments, passed exactly as
// given (as docker, sudo and timeout pass them). command is what runs,
// written as a shell command line to show (quoted where a word needs
// it); argv is nil for a command line.
func commandOf(words []string, usage string) (command string, argv []string, err error) {
	total := 0
	for _, w := range words {
		switch {
		case strings.ContainsRune(w, 0):
			return "", nil, usageErr("the command contains a NUL byte, which no program can receive; remove it")
		case len(w) > maxCommand:
			return "", nil, usageErr("a word of the command is %d bytes, and the kernel passes at most %d KiB as one argument; write it to a script in the working directory and run that", len(w), maxCommand>>10)
		}
		total += len(w) + 1
	}
	switch {
	case len(words) == 0 || len(words) == 1 && strings.TrimSpace(words[0]) == "" || len(words) > 1 && words[0] == "":
		return "", nil, usageErr("no command given; write %s", usage)
	case total > maxArgv:
		return "", nil, usageErr("the command's words are %d bytes together, more than the %d KiB cshell passes; write them to a script in the working directory and run that", total, maxArgv>>10)
	case len(words) == 1:
		return words[0], nil, nil
	}
	return quoteWords(words), append([]string(nil), words...), nil
}

// quoteWords writes words as a shell command line that runs them as they
// are: a word with anything but letters, digits and -_./:=@%+, is put in
// single quotes.
func quoteWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
