package container

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The OCI form of the filter names the calls the C program refuses, no
// more and no fewer.
func TestFilterListsMatchTheProgram(t *testing.T) {
	src, err := os.ReadFile("seccomp_linux.c")
	if err != nil {
		t.Fatal(err)
	}
	macro := func(name string) []string {
		t.Helper()
		// #define NAME ... up to the first line without a trailing backslash.
		re := regexp.MustCompile(`(?m)^#define ` + name + `\b((?:.*\\\n)*.*)$`)
		var calls []string
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			for _, c := range regexp.MustCompile(`DENY\(__NR_(\w+)\)`).FindAllStringSubmatch(m[1], -1) {
				calls = append(calls, c[1])
			}
		}
		if len(calls) == 0 {
			t.Fatalf("no DENY in %s", name)
		}
		return calls
	}
	same := func(what string, c, goList []string) {
		t.Helper()
		c, goList = slices.Clone(c), slices.Clone(goList)
		slices.Sort(c)
		slices.Sort(goList)
		if !slices.Equal(slices.Compact(c), slices.Compact(goList)) {
			t.Errorf("%s: the C program has %v, the OCI filter %v", what, c, goList)
		}
	}
	// EXTRA_DENIED has two definitions: x86_64's (with quotactl_fd) and
	// the others' (quotactl_fd alone).
	same("DENIED and EXTRA_DENIED", append(macro("DENIED"), macro("EXTRA_DENIED")...), append(append(slices.Clone(deniedCalls), x86Calls...), "quotactl_fd"))
	same("MOUNTS", macro("MOUNTS"), mountCalls)
	if !strings.Contains(string(src), "FLAGGED(__NR_unshare, CLONE_NEWUSER, v), FLAGGED(__NR_clone, CLONE_NEWUSER, v)") ||
		!strings.Contains(string(src), "__NR_clone3, 0, 1), FAIL(ENOSYS)") {
		t.Error("the program's user-namespace rules changed: change ociFilter with them")
	}
}
