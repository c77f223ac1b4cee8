package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cshell/cshell/container"
)

// streams are a stdin holding in, and one pipe for stdout and stderr
// whose text out returns once the command's copies are closed.
func streams(t *testing.T, in string) (stdin, stdout *os.File, out func() string) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(in); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	got := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(r)
		got <- string(b)
	}()
	return f, w, func() string {
		w.Close()
		select {
		case s := <-got:
			return s
		case <-time.After(20 * time.Second):
			t.Fatal("the command's streams were not closed")
			return ""
		}
	}
}

// TestBeginHeld: a held shell runs nothing until Begin, which gives it its
// command, directory and streams, once; with the egress, the start step
// is 'G' and comes after the command.
func TestBeginHeld(t *testing.T) {
	for _, withProxy := range []bool{false, true} {
		t.Run(fmt.Sprintf("proxy=%v", withProxy), func(t *testing.T) {
			o := Options{ID: "t", Held: true}
			want := "cg"
			if withProxy {
				useResolverPort(t)
				o.Proxy = &Proxy{Port: freePort(t), Rules: mustRules(t, []string{"allowed.test"}, nil)}
				want = "cG"
			}
			ir := &initRunner{t: t}
			ir.atStart = func(byte) {}
			o.Env = []string{helperVar + "=where"}
			s, err := Start(&fakeRunner{iso: container.Container, start: ir.start}, o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			time.Sleep(200 * time.Millisecond)
			if out := ir.out.String(); out != "" {
				t.Fatalf("a held shell ran something before Begin: %q", out)
			}
			select {
			case <-waitDone(s):
				t.Fatal("the held shell ended before Begin")
			default:
			}
			dir := t.TempDir()
			stdin, stdout, out := streams(t, "given")
			if err := s.Begin("", []string{os.Args[0], "a b", "$HOME"}, dir, stdin, stdout, stdout); err != nil {
				t.Fatal(err)
			}
			ex, err := s.Shell().Wait()
			if err != nil || ex.Code != 0 {
				t.Fatalf("the command ended %+v, %v", ex, err)
			}
			text := out()
			if w := fmt.Sprintf("dir %s <nil> args [\"a b\" \"$HOME\"] stdin \"given\"\nto stderr\n", dir); text != w {
				t.Errorf("the command wrote %q, want %q", text, w)
			}
			if ir.out.String() != "" {
				t.Errorf("the command wrote to the init's first streams: %q", ir.out.String())
			}
			if req := ir.sawRequests(); !strings.HasSuffix(req, want) {
				t.Errorf("requests %q, want them to end %q", req, want)
			}
			if err := s.Begin("", []string{"true"}, dir, stdin, stdout, stdout); !errors.Is(err, ErrBegun) {
				t.Errorf("a second Begin: %v, want ErrBegun", err)
			}
		})
	}
}

// TestBeginRefuses: a directory reached through a symbolic link ends a
// held shell with an error and runs nothing; a shell that was not held
// takes no Begin.
func TestBeginRefuses(t *testing.T) {
	s, ir := startHeld(t)
	dir := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	stdin, stdout, out := streams(t, "")
	err := s.Begin("", []string{os.Args[0]}, filepath.Join(dir, "link"), stdin, stdout, stdout)
	if err == nil || !errors.Is(err, container.ErrSandbox) {
		t.Fatalf("Begin through a symbolic link: %v, want a refusal", err)
	}
	select {
	case <-waitDone(s):
	case <-time.After(10 * time.Second):
		t.Fatal("the refused shell still runs")
	}
	if text := out() + ir.out.String(); text != "" {
		t.Errorf("something ran: %q", text)
	}

	plain, _ := startInit(t, "where", Options{ID: "t"})
	if err := plain.Begin("", []string{"true"}, dir, stdin, stdout, stdout); !errors.Is(err, ErrBegun) {
		t.Errorf("Begin of a shell that was not held: %v, want ErrBegun", err)
	}
}

func startHeld(t *testing.T) (*Sandbox, *initRunner) {
	t.Helper()
	ir := &initRunner{t: t}
	s, err := Start(&fakeRunner{iso: container.Container, start: ir.start}, Options{ID: "t", Held: true, Env: []string{helperVar + "=where"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ir
}

// waitDone is closed when the shell has ended.
func waitDone(s *Sandbox) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		_, _ = s.Shell().Wait()
		close(c)
	}()
	return c
}
