package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// PassedEnv are the variables of cshell's own environment that reach a
// shell by default, as docker, podman and bubblewrap pass none: what
// programs need to find their way (PATH, HOME, the user, the shell, the
// terminal, the locale, the time zone), and no token or socket. A trailing
// * matches a prefix.
var PassedEnv = append([]string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_*", "TZ"}, TrustEnv...)

// TrustEnv name the certificates a caller's TLS clients trust (a
// company's TLS-inspecting gateway, a CI runner's own authority): they
// name public certificates, never secrets, so they pass by default, and
// the files they name are shown to the shell (see TrustFiles).
var TrustEnv = []string{"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
	"CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT"}

// TrustFiles are the paths the trust variables of env name (SSL_CERT_DIR
// may list several, separated by colons), absolute ones only.
func TrustFiles(env []string) []string {
	var paths []string
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		if !slices.Contains(TrustEnv, k) {
			continue
		}
		for _, p := range strings.Split(v, ":") {
			if filepath.IsAbs(p) && !slices.Contains(paths, filepath.Clean(p)) {
				paths = append(paths, filepath.Clean(p))
			}
		}
	}
	return paths
}

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

// SetEnv sets k to v in env (KEY=VALUE entries): the first entry of k is
// changed in place, else one is added.
func SetEnv(env []string, k, v string) []string {
	for i, e := range env {
		if len(e) > len(k) && e[:len(k)] == k && e[len(k)] == '=' {
			env[i] = k + "=" + v
			return env
		}
	}
	return append(env, k+"="+v)
}

// EnvValue is key's value in env ("" when unset); the last entry wins,
// as it does for exec.
func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
