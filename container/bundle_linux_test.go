package container

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	mobyseccomp "github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// piece returns the body of one of the C program's static arrays.
func piece(t *testing.T, src, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)static const struct sock_filter ` + name + `\[\] = \{(.*?)\n\};`).FindStringSubmatch(src)
	if m == nil {
		t.Fatalf("no piece %s in seccomp_linux.c", name)
	}
	return m[1]
}

// calls lists the calls named in text with the macros given.
func calls(text string, macros ...string) []string {
	var out []string
	re := regexp.MustCompile(`\b(?:` + strings.Join(macros, "|") + `)\(__NR_(\w+)`)
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

func sameSet(t *testing.T, what string, a, b []string) {
	t.Helper()
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(slices.Compact(a), slices.Compact(b)) {
		t.Errorf("%s: %v and %v differ", what, a, b)
	}
}

// The OCI form of the filter names the calls the C program rules, no more
// and no fewer, with the same arguments.
func TestFilterListsMatchTheProgram(t *testing.T) {
	b, err := os.ReadFile("seccomp_linux.c")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	sameSet(t, "denied", calls(piece(t, src, "denied"), "DENY"), append(slices.Clone(deniedCalls), x86Calls...))
	sameSet(t, "mounts", calls(piece(t, src, "mounts"), "DENY"), mountCalls)
	sameSet(t, "no_xattr", calls(piece(t, src, "no_xattr"), "DENY"), xattrCalls)
	sameSet(t, "no_xattr_told", calls(piece(t, src, "no_xattr_told"), "ASK_NR"), xattrCalls)
	sameSet(t, "xattr", calls(piece(t, src, "xattr"), "ALLOW_NR"), xattrCalls)
	var modes []string
	for _, c := range modeCalls {
		modes = append(modes, c.Name)
	}
	// The mode rules are one macro, MODES(v), put in twice: refusing at
	// once, and handing over to be refused and told.
	for _, want := range []string{"modes[] = { MODES(REFUSE) };", "modes_told[] = { MODES(ASK) };"} {
		if !strings.Contains(src, want) {
			t.Errorf("the C program has no %s", want)
		}
	}
	start, end := strings.Index(src, "// CREATES(nr, f, m, v)"), strings.Index(src, "static const struct sock_filter modes[]")
	if start < 0 || end < start {
		t.Fatal("no MODES macro in seccomp_linux.c")
	}
	sameSet(t, "modes", calls(src[start:end], "CREATES", "MODE"), modes)
	for _, c := range modeCalls {
		want := "MODE(__NR_" + c.Name + ", " + strconv.Itoa(int(c.Mode)) + ", v)"
		if c.Flags != 0 {
			want = "CREATES(__NR_" + c.Name + ", " + strconv.Itoa(int(c.Flags)) + ", " + strconv.Itoa(int(c.Mode)) + ", v)"
		}
		if !strings.Contains(src, want) {
			t.Errorf("the C program has no %s", want)
		}
	}
	var fams []string
	for _, m := range regexp.MustCompile(`BPF_JEQ \| BPF_K, (\d+),`).FindAllStringSubmatch(piece(t, src, "sockets"), -1) {
		fams = append(fams, m[1])
	}
	var want []string
	for _, f := range socketFamilies {
		want = append(want, strconv.FormatUint(f, 10))
	}
	sameSet(t, "socket families", fams, want)
	var ps []string
	for _, m := range regexp.MustCompile(`BPF_JEQ \| BPF_K, (0x[0-9a-f]+),`).FindAllStringSubmatch(piece(t, src, "personas"), -1) {
		v, _ := strconv.ParseUint(m[1], 0, 64)
		ps = append(ps, strconv.FormatUint(v, 10))
	}
	want = nil
	for _, p := range personas {
		want = append(want, strconv.FormatUint(p, 10))
	}
	sameSet(t, "personas", ps, want)
	nested := calls(piece(t, src, "ns_nested"), "ALLOW_NR")
	sameSet(t, "ns_nested", nested, append([]string{"clone", "clone3", "unshare"}, mountCalls...))
	if !strings.Contains(piece(t, src, "ns_ask"), "NOSYS(__NR_clone3), NS_RULE(__NR_clone, ASK), NS_RULE(__NR_unshare, ASK)") {
		t.Error("the program's namespace rules changed: change ociFilter with them")
	}
}

// ruled are the calls Docker's default profile allows that the C program
// rules itself (their arguments decide, or cshell refuses them): the
// allowlist leaves them out.
var ruled = []string{"socket", "personality", "clone", "clone3", "unshare", "connect", "sendto", "sendmsg",
	"open", "openat", "openat2", "creat", "chmod", "fchmod", "fchmodat", "fchmodat2", "mknod", "mknodat",
	"setxattr", "lsetxattr", "fsetxattr", "setxattrat", "clock_adjtime", "clock_adjtime64", "name_to_handle_at"}

// The allowlist is Docker's default profile for a process without
// capabilities on amd64 and arm64, but for the calls the program rules
// itself; the socket families and personas are Docker's too.
func TestAllowlistIsDockers(t *testing.T) {
	p := mobyseccomp.DefaultProfile()
	var docker []string
	var families, persona []uint64
	for _, s := range p.Syscalls {
		if s.Action != specs.ActAllow || s.Includes != nil && len(s.Includes.Caps) > 0 {
			continue
		}
		if s.Includes != nil && len(s.Includes.Arches) > 0 && !slices.ContainsFunc(s.Includes.Arches, func(a string) bool { return a == "amd64" || a == "arm64" }) {
			continue
		}
		if len(s.Args) > 0 {
			for _, a := range s.Args {
				switch {
				case slices.Contains(s.Names, "socket") && a.Op == specs.OpEqualTo:
					families = append(families, a.Value)
				case slices.Contains(s.Names, "personality"):
					persona = append(persona, a.Value)
				}
			}
			continue
		}
		docker = append(docker, s.Names...)
	}
	var expected []string
	for _, n := range docker {
		if !slices.Contains(ruled, n) {
			expected = append(expected, n)
		}
	}
	sameSet(t, "the allowlist and Docker's profile", allowedCalls(), expected)
	if !slices.Equal(families, socketFamilies) {
		t.Errorf("socket families: Docker's %v, cshell's %v", families, socketFamilies)
	}
	// Beyond Docker's personas: ADDR_NO_RANDOMIZE, alone and with
	// PER_LINUX32 (gdb, setarch -R).
	persona = append(persona, 0x40000, 0x40008)
	slices.Sort(persona)
	if mine := slices.Sorted(slices.Values(personas)); !slices.Equal(persona, mine) {
		t.Errorf("personas: Docker's and ADDR_NO_RANDOMIZE %v, cshell's %v", persona, mine)
	}
	// Every call the program rules is one Docker knows, or one it
	// refuses without capabilities as cshell does.
	for _, n := range ruled {
		if !slices.Contains(docker, n) && n != "clone" && n != "clone3" && n != "unshare" && n != "socket" && n != "personality" {
			t.Errorf("%s: ruled by cshell, unknown to Docker's profile", n)
		}
	}
}
