package shells

import (
	"testing"
	"time"

	"github.com/cshell/cshell/internal/safefs"
)

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// testDir opens a directory as the state code holds its folders.
func testDir(t *testing.T, path string) *safefs.Dir {
	t.Helper()
	d, err := safefs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
