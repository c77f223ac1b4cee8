package plan

import (
	"slices"
	"strings"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/policy"
)

// buildEnv starts from the allowlisted part of cshell's environment
// (policy.PassedEnv and config env.pass) and applies the -e entries:
// KEY=VALUE sets, KEY passes cshell's value of KEY. HOME is the user's
// home even when cshell's environment lacks it.
func buildEnv(base, extra, pass []string, home string) ([]string, error) {
	var env []string
	for _, e := range base {
		if k, _, ok := strings.Cut(e, "="); ok && policy.EnvAllowed(k, pass) {
			env = append(env, e)
		}
	}
	if home != "" && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, "HOME=") }) {
		env = append(env, "HOME="+home)
	}
	for _, e := range extra {
		k, v, ok := strings.Cut(e, "=")
		if err := policy.CheckEnvKey(k); err != nil {
			return nil, usageErr("--env %q: %w; write KEY=VALUE, or KEY to pass this environment's value", escape.Line(e), err)
		}
		if strings.ContainsRune(v, 0) {
			return nil, usageErr("--env %s: the value holds a NUL byte, which no program can receive", k)
		}
		if !ok {
			if v, ok = lookup(base, k); !ok {
				continue // docker's rule: an unset KEY is left out
			}
		}
		env = policy.SetEnv(env, k, v)
	}
	return env, nil
}

// lookup is key's value in env, and whether it is set there.
func lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}
