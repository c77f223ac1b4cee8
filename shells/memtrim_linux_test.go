package shells

import (
	"debug/elf"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// rssFileKiB reads how much of mapped files this process has resident.
func rssFileKiB(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "RssFile:" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}

func TestDropStartupCode(t *testing.T) {
	if exe, err := elf.Open("/proc/self/exe"); err == nil {
		typ := exe.Type
		exe.Close()
		if typ != elf.ET_EXEC {
			t.Skipf("the test binary is a %v (a PIE, built with -race or -buildmode=pie, say): dropStartupCode leaves such binaries alone", typ)
		}
	}
	// Touch a good part of the binary first, as starting a shell does.
	var m Meta
	b, _ := json.Marshal(&m)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	before := rssFileKiB(t)
	dropStartupCode()
	after := rssFileKiB(t)
	t.Logf("RssFile %d KiB before, %d KiB after", before, after)
	if after >= before {
		t.Errorf("RssFile did not shrink: %d KiB before, %d KiB after", before, after)
	}
	// The code still runs, and data written before is intact.
	b2, err := json.Marshal(&m)
	if err != nil || string(b2) != string(b) {
		t.Errorf("after dropping: %s, %v; want %s", b2, err, b)
	}
}
