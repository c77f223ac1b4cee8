package main

import (
	"strings"
	"testing"
)

func TestStartsShell(t *testing.T) {
	for args, want := range map[string]bool{
		"run -- true":                         true,
		"run -d --expose 5173 -- npm run dev": true,
		"--json run true":                     true,
		"--state-dir /x --config /y run true": true,
		"--state-dir run ps":                  false, // "run" is the state dir here
		"ps":                                  false,
		"serve":                               false,
		"output run":                          false,
		"--json":                              false,
		"":                                    false,
	} {
		if got := startsShell(strings.Fields(args)); got != want {
			t.Errorf("startsShell(%q) = %v, want %v", args, got, want)
		}
	}
}
