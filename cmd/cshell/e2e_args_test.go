//go:build e2e

package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Several words after -- reach the program exactly as given: no shell
// joins and splits them again (python3 -c 'a; b' was a bash syntax error,
// '$HOME' printed the home). One word stays a shell command line.
func TestArgumentsAsGiven(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso, func(t *testing.T) {
			wd := t.TempDir()
			words := []string{"$HOME", "two words", "it's", "*", "", "a\nb", `\`, "--flag"}
			args := append([]string{"run", "--isolation", iso, "--", "python3", "-c",
				"import json, sys, time; time.sleep(0.01); print(json.dumps(sys.argv[1:]))"}, words...)
			r := run(t, call{args: args, dir: wd})
			var got []string
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != 0 {
				t.Fatalf("python3 printed %q (stderr %q, code %d): %v", r.stdout, r.stderr, r.code, err)
			}
			if strings.Join(got, "\x00") != strings.Join(words, "\x00") || len(got) != len(words) {
				t.Errorf("the program got %q, want %q", got, words)
			}

			// One word is a command line: the shell expands it.
			r = sh(t, iso, wd, `echo "$((6*7))" '$HOME'`)
			if r.stdout != "42 $HOME\n" || r.code != 0 {
				t.Errorf("a shell command line printed %q (stderr %q, code %d)", r.stdout, r.stderr, r.code)
			}

			// A missing program is 127, a file that cannot run 126, as a
			// shell would say.
			r = run(t, call{args: []string{"run", "--isolation", iso, "--", "cshell-e2e-no-such-program", "x"}, dir: wd})
			if r.code != 127 || !strings.Contains(r.stderr, "cshell-e2e-no-such-program") {
				t.Errorf("a missing program: code %d, stderr %q; want 127 naming it", r.code, r.stderr)
			}
			writeFile(t, wd+"/not-executable", "echo should not run\n")
			r = run(t, call{args: []string{"run", "--isolation", iso, "--", "./not-executable", "x"}, dir: wd})
			if r.code != 126 {
				t.Errorf("a file that cannot run: code %d, stderr %q; want 126", r.code, r.stderr)
			}
			r = run(t, call{args: []string{"run", "--isolation", iso, "--", "", "x"}, dir: wd})
			if r.code != 2 {
				t.Errorf("an empty program name: code %d, stderr %q; want 2", r.code, r.stderr)
			}
		})
	}
}

// A background shell given words shows them as one command line that
// would run them as given.
func TestArgumentsAsGivenInBackground(t *testing.T) {
	state := t.TempDir()
	r := run(t, call{args: []string{"--state-dir", state, "--json", "run", "-d", "--", "sh", "-c", "echo \"[$0]\"; sleep 0.2", "it's $x"}, dir: t.TempDir()})
	if r.code != 0 {
		t.Fatalf("run -d: code %d, stderr %q", r.code, r.stderr)
	}
	var st struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatal(err)
	}
	r = run(t, call{args: []string{"--state-dir", state, "wait", st.ID}})
	if r.code != 0 {
		t.Fatalf("wait: code %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, call{args: []string{"--state-dir", state, "logs", st.ID}})
	if r.stdout != "[it's $x]\n" {
		t.Errorf("the log holds %q, want the argument as given", r.stdout)
	}
	r = run(t, call{args: []string{"--state-dir", state, "--json", "ps", "--all"}})
	var ps []struct{ Command string }
	if err := json.Unmarshal([]byte(r.stdout), &ps); err != nil || len(ps) != 1 {
		t.Fatalf("ps --json: %q: %v", r.stdout, err)
	}
	if want := `sh -c 'echo "[$0]"; sleep 0.2' 'it'\''s $x'`; ps[0].Command != want {
		t.Errorf("ps shows the command as %q, want %q", ps[0].Command, want)
	}
}
