package container

import (
	"fmt"
	"os"
	"strings"
)

// explain wraps a container start failure with the kernel feature that is
// missing, when one is, and points at cshell doctor.
func explain(err error) error {
	if missing := missingFeature(); missing != "" {
		return fmt.Errorf("%w: %s; run cshell doctor, or --isolation process for a shell without a sandbox (%w)", ErrSandbox, missing, err)
	}
	return fmt.Errorf("%w: %w; run cshell doctor to see what this machine allows", ErrSandbox, err)
}

// missingFeature names the first kernel setting that stops rootless
// containers here, or returns "".
func missingFeature() string {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		return "the kernel has no user namespaces (CONFIG_USER_NS)"
	}
	if v, ok := readSysctl("user/max_user_namespaces"); ok && v == "0" {
		return "user namespaces are disabled (sysctl user.max_user_namespaces=0)"
	}
	if os.Geteuid() != 0 {
		if v, ok := readSysctl("kernel/unprivileged_userns_clone"); ok && v == "0" {
			return "unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone=0)"
		}
		if v, ok := readSysctl("kernel/apparmor_restrict_unprivileged_userns"); ok && v == "1" {
			return "AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns=1)"
		}
	}
	for _, ns := range []string{"pid", "net", "mnt", "ipc", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err != nil {
			return "the kernel has no " + ns + " namespaces"
		}
	}
	return ""
}

func readSysctl(name string) (string, bool) {
	b, err := os.ReadFile("/proc/sys/" + name)
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}
