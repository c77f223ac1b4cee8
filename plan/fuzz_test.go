package plan

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// FuzzNew plans requests made of hostile words: a plan or a sentence of
// kind ErrUsage or ErrRefused, one line, never a panic; and every plan
// survives its trip to the supervisor unchanged.
func FuzzNew(f *testing.F) {
	f.Add("echo hi", "", "5173", "example.com", "api.test:198.18.0.2", "A=1", "web", "default", "up$", false)
	f.Add("", "x", "0.0.0.0:80", "*.x:99999", ":", "=", "shell-1", "..", "(", true)
	f.Add("a\x00b", "", "[::1]:8080", "[::1]", "n:[fd00::2]", "PATH", "all", "s\n", "", true)
	f.Fuzz(func(t *testing.T, cmd, arg, expose, allow, addHost, env, name, session, readyLog string, background bool) {
		r, facts := base(t)
		r.Command = []string{cmd}
		if arg != "" {
			r.Command = append(r.Command, arg)
		}
		r.Expose, r.AllowHosts, r.AddHosts, r.Env = nonEmpty(expose), nonEmpty(allow), nonEmpty(addHost), nonEmpty(env)
		r.Session = session
		if background {
			r.Purpose, r.Name, r.Ready.Log = Background, name, readyLog
		}
		p, err := New(r, facts)
		if err != nil {
			if !errors.Is(err, ErrUsage) && !errors.Is(err, ErrRefused) {
				t.Fatalf("error of no kind: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a sentence of several lines: %q", err)
			}
			return
		}
		defer p.Release()
		trip(t, p)
		if _, err := json.Marshal(p); err != nil {
			t.Fatal(err)
		}
	})
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
