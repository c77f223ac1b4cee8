package policy

import (
	"errors"
	"fmt"
	"strings"
)

// PassedEnv are the variables of cshell's own environment that reach a
// shell by default, as docker, podman and bubblewrap pass none: what
// programs need to find their way (PATH, HOME, the user, the shell, the
// terminal, the locale, the time zone), and no token or socket. A trailing
// * matches a prefix.
var PassedEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_*", "TZ"}

// EnvAllowed reports whether the variable key of cshell's environment
// reaches a shell: it is in PassedEnv or in pass (config env.pass).
func EnvAllowed(key string, pass []string) bool {
	for _, lists := range [][]string{PassedEnv, pass} {
		for _, p := range lists {
			if prefix, ok := strings.CutSuffix(p, "*"); ok {
				if strings.HasPrefix(key, prefix) {
					return true
				}
			} else if key == p {
				return true
			}
		}
	}
	return false
}

// ErrEnvKey marks a variable name that cannot be passed.
var ErrEnvKey = errors.New("bad variable name")

// CheckEnvKey refuses a variable name that no program could be given
// sensibly: empty, or holding "=", a control character (newlines too) or
// a space.
func CheckEnvKey(k string) error {
	if k == "" {
		return fmt.Errorf("%w: the name is empty", ErrEnvKey)
	}
	for _, c := range k {
		if c == '=' || c <= ' ' || c == 0x7f {
			return fmt.Errorf("%w %q: a name has no '=', space or control character", ErrEnvKey, k)
		}
	}
	return nil
}

// CheckEnvPattern checks an env.pass entry: a name, or a prefix and *.
func CheckEnvPattern(p string) error {
	name, _ := strings.CutSuffix(p, "*")
	if name == "" {
		return fmt.Errorf("%w %q: give a name or a prefix followed by *", ErrEnvKey, p)
	}
	if strings.Contains(name, "*") {
		return fmt.Errorf("%w %q: * may only end a pattern", ErrEnvKey, p)
	}
	return CheckEnvKey(name)
}
