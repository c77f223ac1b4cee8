//go:build unix

package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// tree makes a directory with a file, a subdirectory, links that lead in
// and out of it, and a FIFO; outside is a directory beside it.
func tree(t *testing.T) (*Dir, string, string) {
	t.Helper()
	base := t.TempDir()
	in, out := filepath.Join(base, "in"), filepath.Join(base, "out")
	for _, d := range []string{in, out, filepath.Join(in, "sub")} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string]string{
		filepath.Join(in, "file"):        "inside\n",
		filepath.Join(in, "sub", "file"): "deeper\n",
		filepath.Join(out, "secret"):     "outside\n",
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"link-out": filepath.Join(out, "secret"), "dir-out": out, "link-in": "file", "dir-in": "sub",
	} {
		if err := os.Symlink(target, filepath.Join(in, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(in, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Open(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, in, out
}

func TestReadFileRefusesWhatIsNotPlain(t *testing.T) {
	d, _, _ := tree(t)
	for _, c := range []struct {
		rel  string
		want error // nil: readable
	}{
		{"file", nil},
		{"sub/file", nil},
		{"link-out", syscall.ELOOP},
		{"link-in", syscall.ELOOP},
		{"dir-out/secret", syscall.ELOOP},
		{"dir-in/file", syscall.ELOOP},
		{"../out/secret", ErrBadName},
		{"/etc/passwd", ErrBadName},
		{"sub/../file", ErrBadName},
		{"", ErrBadName},
		{"fifo", ErrNotRegular},
		{"sub", ErrNotRegular},
	} {
		done := make(chan struct{})
		var err error
		go func() { _, err = d.ReadFile(c.rel, 1<<20); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%q) blocked", c.rel)
		}
		switch {
		case c.want == nil && err != nil:
			t.Errorf("ReadFile(%q): %v", c.rel, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("ReadFile(%q) = %v, want %v", c.rel, err, c.want)
		}
	}
}

func TestReadFileBounded(t *testing.T) {
	d, in, _ := tree(t)
	f, err := os.Create(filepath.Join(in, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(3 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := d.ReadFile("sparse", 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 3 GB file: %v", err)
	}
	if b, err := d.ReadFile("file", 7); err != nil || string(b) != "inside\n" {
		t.Errorf("a file of exactly the bound: %q %v", b, err)
	}
	if _, err := d.ReadFile("file", 6); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file one byte over: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(in, "fifo"), 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Errorf("ReadRegular of a FIFO: %v", err)
	}
	if _, err := ReadRegular(filepath.Join(in, "link-out"), 1<<20); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("ReadRegular of a link: %v", err)
	}
}

func TestWritesDoNotFollowLinks(t *testing.T) {
	d, in, out := tree(t)
	if err := d.WriteFile("link-out", []byte("x"), 0o600); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("WriteFile through a link: %v", err)
	}
	if _, err := d.OpenFile("link-out", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("append through a link: %v", err)
	}
	if err := d.Mkdir("dir-out/new", 0o700); !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
		t.Errorf("Mkdir through a link: %v", err)
	}
	if err := d.WriteAtomic("sub/state", []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(in, "sub", "state")); string(b) != "new\n" {
		t.Errorf("WriteAtomic wrote %q", b)
	}
	if err := d.WriteAtomic("link-in", []byte("replaced\n"), 0o600); err != nil {
		t.Fatal(err) // replaces the link itself
	}
	if b, _ := os.ReadFile(filepath.Join(in, "file")); string(b) != "inside\n" {
		t.Errorf("WriteAtomic over a link wrote its target: %q", b)
	}
	if err := d.RemoveAll("dir-out"); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveAll("sub"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "secret")); err != nil {
		t.Errorf("RemoveAll followed a link out: %v", err)
	}
	names, err := d.Names("")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 5 { // file, link-out, link-in, fifo, dir-in
		t.Errorf("left %v", names)
	}
	if st, err := d.Lstat("dir-in"); err != nil || st.Mode&os.ModeSymlink == 0 {
		t.Errorf("Lstat of a link: %v %v", st.Mode, err)
	}
}

func TestHeldAcrossRename(t *testing.T) {
	d, in, _ := tree(t)
	if err := os.Rename(in, in+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(in, 0o700); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile("file", 100); err != nil || string(b) != "inside\n" {
		t.Errorf("after a swap, the held directory reads %q %v", b, err)
	}
	p, err := d.SocketPath("sock")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) >= 100 {
		t.Errorf("socket path %q", p)
	}
}

// TestWalkRefusesLinks covers the path taken where openat2 is missing.
func TestWalkRefusesLinks(t *testing.T) {
	d, _, _ := tree(t)
	for _, parts := range [][]string{{"dir-out", "secret"}, {"link-out"}, {"dir-in", "file"}} {
		fd, err := walk(d.fd, parts, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err == nil {
			syscall.Close(fd)
			t.Errorf("walk %v opened through a link", parts)
		}
	}
	fd, err := walk(d.fd, []string{"sub", "file"}, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
}
