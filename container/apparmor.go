package container

import (
	"fmt"
	"strings"
)

// AppArmorProfile is a profile for the cshell binary at path that grants
// it user namespaces on a host that restricts them to confined programs
// (kernel.apparmor_restrict_unprivileged_userns=1), the way podman and
// Chrome ship theirs: unconfined otherwise, so it changes nothing else.
func AppArmorProfile(path string) (string, error) {
	if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "\"\n\x00") {
		return "", fmt.Errorf("cannot write an AppArmor profile for %q: it needs an absolute path without quotes or newlines", path)
	}
	attach := path
	if strings.ContainsAny(path, " \t") {
		attach = `"` + path + `"`
	}
	return `# AppArmor profile for cshell at ` + path + `: it may make user namespaces
# where kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10 and
# later) allows them only to programs with a profile; it is unconfined
# otherwise, as podman's and Chrome's are. Install it with:
#   cshell doctor --apparmor-profile | sudo tee /etc/apparmor.d/cshell >/dev/null
#   sudo apparmor_parser -r /etc/apparmor.d/cshell
# and again when the binary moves.
abi <abi/4.0>,
include <tunables/global>

profile cshell ` + attach + ` flags=(unconfined) {
  userns,

  # Site-specific additions and overrides.
  include if exists <local/cshell>
}
`, nil
}
