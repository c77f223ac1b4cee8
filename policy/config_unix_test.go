//go:build unix

package policy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesUnsafeFiles plants what a shell could leave as its
// .cshell.json: each is refused at once, without reading it.
func TestLoadRefusesUnsafeFiles(t *testing.T) {
	for name, plant := range map[string]func(string) error{
		"fifo":     func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"symlink":  func(p string) error { return os.Symlink("/dev/zero", p) },
		"sparse":   func(p string) error { return os.WriteFile(p, nil, 0o600) },
		"too long": func(p string) error { return os.WriteFile(p, bytes.Repeat([]byte(" "), MaxFileSize+1), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			proj := t.TempDir()
			p := filepath.Join(proj, ProjectFile)
			if err := plant(p); err != nil {
				t.Fatal(err)
			}
			if name == "sparse" {
				if err := os.Truncate(p, 3<<30); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { _, _, err := Load(filepath.Join(proj, "none.json"), false, proj); done <- err }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), p) {
					t.Errorf("Load = %v, want ErrUnsafeFile naming %s", err, p)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Load blocked")
			}
		})
	}
}
