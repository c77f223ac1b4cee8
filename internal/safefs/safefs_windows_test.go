package safefs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteAtomicWaitsForAReader: a record a reader holds open (opened as
// cshell's readers open it, through a Dir, which shares delete access) is
// replaced once the reader lets go, not refused.
func TestWriteAtomicWaitsForAReader(t *testing.T) {
	d, base := tempDir(t)
	if err := d.WriteAtomic("meta.json", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := d.OpenFile("meta.json", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		reader.Close()
	}()
	if err := d.WriteAtomic("meta.json", []byte("new"), 0o644); err != nil {
		t.Fatalf("replacing a file a reader held for 200 ms: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(base, "meta.json")); err != nil || string(got) != "new" {
		t.Errorf("after the replace: %q %v", got, err)
	}
	names, err := d.Names("")
	if err != nil || len(names) != 1 {
		t.Errorf("left beside it: %q %v", names, err)
	}
}

// TestRenameGivesUp: a file held open for good is refused after the wait,
// with Windows's error, and nothing is lost.
func TestRenameGivesUp(t *testing.T) {
	d, base := tempDir(t)
	for _, n := range []string{"a", "b"} {
		if err := d.WriteFile(n, []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	held, err := d.OpenFile("b", os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	start := time.Now()
	err = d.Rename("a", "b")
	if err == nil || !heldOpen(err) {
		t.Fatalf("renaming over a held file: %v", err)
	}
	if took := time.Since(start); took < renameWait {
		t.Errorf("gave up after %v, before the wait of %v", took, renameWait)
	}
	if got, err := os.ReadFile(filepath.Join(base, "a")); err != nil || string(got) != "a" {
		t.Errorf("the source after the refusal: %q %v", got, err)
	}
}

// tempDir opens a new temporary directory, closed with the test.
func tempDir(t *testing.T) (*Dir, string) {
	t.Helper()
	base := t.TempDir()
	d, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, base
}
