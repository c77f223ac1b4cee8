package shells

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/containerd/console"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/policy"
)

// The tests here run foreground shells (Run) with process isolation.

// syncBuffer is a bytes.Buffer for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// seen, when set, hears what was written so far after each write.
	seen func(string)
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	n, err := b.buf.Write(p)
	s := b.buf.String()
	b.mu.Unlock()
	if b.seen != nil {
		b.seen(s)
	}
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// run runs o in the foreground and returns its exit code and streams.
func run(t *testing.T, ctx context.Context, o RunOptions) (int, string, string, error) {
	t.Helper()
	var stdout, stderr syncBuffer
	if o.Stdout == nil {
		o.Stdout = &stdout
	}
	o.Stderr = &stderr
	if o.Stdin == nil {
		o.Stdin = devNull(t)
	}
	code, err := Run(ctx, o)
	return code, stdout.String(), stderr.String(), err
}

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		words []string
		code  int
		out   string
	}{
		{[]string{`echo "hello $SHELLS_TEST_MARK"; echo oops >&2`}, 0, "hello " + testMark + "\n"},
		{[]string{`exit 7`}, 7, ""},
		{[]string{`kill -TERM $$`}, 128 + int(syscall.SIGTERM), ""},
		{[]string{"printf", "%s|", "two words", "$HOME"}, 0, "two words|$HOME|"}, // as given, no shell between
		{[]string{`pwd`}, 0, ""},                                                 // checked below: the working directory
	} {
		o := processOptions(t, tc.words...)
		code, out, errOut, err := run(t, context.Background(), o)
		if err != nil {
			t.Errorf("%q: %v", tc.words, err)
			continue
		}
		if tc.words[0] == "pwd" {
			tc.out = o.FS.Cwd + "\n"
		}
		if code != tc.code || out != tc.out {
			t.Errorf("%q: exit %d, output %q; want %d, %q", tc.words, code, out, tc.code, tc.out)
		}
		if strings.Contains(tc.words[0], "oops") && errOut != "oops\n" {
			t.Errorf("stderr %q", errOut)
		}
	}
}

func TestRunReadsItsInput(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("line one\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := processOptions(t, `tac`)
	o.Stdin = f
	if code, out, _, err := run(t, context.Background(), o); err != nil || code != 0 || out != "line two\nline one\n" {
		t.Errorf("tac: %d %q %v", code, out, err)
	}
}

func TestRunTimesOut(t *testing.T) {
	o := processOptions(t, `trap "" TERM; echo started; while :; do sleep 0.1; done`)
	o.Timeout, o.Grace = 300*time.Millisecond, 200*time.Millisecond
	code, out, errOut, err := run(t, context.Background(), o)
	if err != nil || code != 128+int(syscall.SIGKILL) || out != "started\n" {
		t.Errorf("a timeout: %d %q %v", code, out, err)
	}
	if errOut != "cshell: timed out after 300ms; stopping the command\n" {
		t.Errorf("stderr %q", errOut)
	}
	// A command that heeds the TERM ends with it.
	o = processOptions(t, `exec sleep 300`)
	o.Timeout = 200 * time.Millisecond
	if code, _, _, err := run(t, context.Background(), o); err != nil || code != 128+int(syscall.SIGTERM) {
		t.Errorf("a timeout heeded: %d %v", code, err)
	}
}

func TestRunEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := processOptions(t, `echo started; exec sleep 300`)
	o.Stdout = &syncBuffer{seen: func(s string) {
		if strings.Contains(s, "started") {
			cancel()
		}
	}}
	code, _, _, err := run(t, ctx, o)
	if err != nil || code != 128+int(syscall.SIGKILL) {
		t.Errorf("cancelled: %d %v", code, err)
	}
}

func TestRunPassesSignalsOn(t *testing.T) {
	o := processOptions(t, `trap 'echo got USR1; exit 5' USR1; echo ready; while :; do sleep 0.1; done`)
	var once sync.Once
	o.Stdout = &syncBuffer{seen: func(s string) {
		if strings.Contains(s, "ready") {
			// Run catches the signals it passes on before the shell
			// starts: this process goes on.
			once.Do(func() { syscall.Kill(os.Getpid(), syscall.SIGUSR1) })
		}
	}}
	code, _, _, err := run(t, context.Background(), o)
	if err != nil || code != 5 {
		t.Errorf("USR1: %d %v", code, err)
	}
	if out := o.Stdout.(*syncBuffer).String(); out != "ready\ngot USR1\n" {
		t.Errorf("output %q", out)
	}
}

func TestRunRefuses(t *testing.T) {
	off := false
	for name, change := range map[string]func(*RunOptions){
		"no command":        func(o *RunOptions) { o.Command = nil },
		"a bad session":     func(o *RunOptions) { o.Session = "a/b" },
		"readiness":         func(o *RunOptions) { o.Ready.Log = "x" },
		"shells turned off": func(o *RunOptions) { o.Config = &policy.Config{Shells: policy.ShellsConfig{Enabled: &off}} },
		"--hide":            func(o *RunOptions) { o.FS.Hide = []string{"/etc"} },
		"a missing workdir": func(o *RunOptions) { o.FS.Cwd = filepath.Join(o.FS.Cwd, "missing") },
		"a bad isolation":   func(o *RunOptions) { o.Isolation = "bogus" },
	} {
		o := processOptions(t, `echo ran`)
		change(&o)
		code, out, _, err := run(t, context.Background(), o)
		if err == nil || out != "" || code != 0 {
			t.Errorf("%s: ran (%d %q %v)", name, code, out, err)
		}
		if name != "a bad isolation" && !errors.Is(err, ErrUsage) && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v is neither a usage error nor a refusal", name, err)
		}
	}
}

func TestRunWarnsOfWhatProcessIsolationLeavesOut(t *testing.T) {
	o := processOptions(t, `true`)
	o.Config = &policy.Config{Filesystem: policy.FilesystemConfig{DenyRead: []string{"~/secrets"}}}
	code, _, errOut, err := run(t, context.Background(), o)
	if err != nil || code != 0 || !strings.HasPrefix(errOut, "cshell: warning: --isolation process: the configuration's network.allow, filesystem.denyRead and limits do not apply") {
		t.Errorf("%d %v, stderr %q", code, err, errOut)
	}
}

func TestRunChecksItsExposedPorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	o := processOptions(t, `echo ran`)
	o.Expose = []string{l.Addr().String()}
	if _, out, _, err := run(t, context.Background(), o); !errors.Is(err, ErrRefused) || out != "" {
		t.Errorf("a port in use: %q %v", out, err)
	}
	// A free one: the shell's own server binds it (nothing relays).
	o.Expose = []string{"127.0.0.1:" + strconv.Itoa(freePort(t))}
	if code, out, _, err := run(t, context.Background(), o); err != nil || code != 0 || out != "ran\n" {
		t.Errorf("a free port: %d %q %v", code, out, err)
	}
}

// TestRunWithAStateDir: a process-group shell needs no state dir (it
// reaches nothing through one): the state dir is left alone.
func TestRunWithAStateDir(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	o := processOptions(t, `echo ran`)
	o.StateDir = state
	if code, out, _, err := run(t, context.Background(), o); err != nil || code != 0 || out != "ran\n" {
		t.Errorf("%d %q %v", code, out, err)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the state dir: %v", err)
	}
}

// newPty opens a pseudo-terminal: its master (as a console, and as the
// file it wraps) and its slave side.
func newPty(t *testing.T) (console.Console, *os.File, *os.File) {
	t.Helper()
	f, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	master, path, err := console.NewPtyFromFile(f) // it owns f now
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	slave, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		slave.Close()
		master.Close()
	})
	return master, f, slave
}

// readUntil reads r until what was read holds want.
func readUntil(t *testing.T, r io.Reader, want string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		var b []byte
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b = append(b, buf[:n]...)
			if strings.Contains(string(b), want) || err != nil {
				got <- string(b)
				return
			}
		}
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, want) {
			t.Fatalf("read %q, want %q", s, want)
		}
		return s
	case <-time.After(long):
		t.Fatalf("%q never came", want)
		return ""
	}
}

// TestRunPutsAPipeBeforeATerminal: without a terminal of its own, the
// command never gets the caller's: its output reaches it through a pipe.
func TestRunPutsAPipeBeforeATerminal(t *testing.T) {
	master, _, slave := newPty(t)
	if !IsTerminal(slave) || IsTerminal(&bytes.Buffer{}) || IsTerminal((*os.File)(nil)) || IsTerminal(devNull(t)) {
		t.Fatal("IsTerminal")
	}
	o := processOptions(t, `if test -t 1; then echo "a terminal"; else echo "a pipe"; fi`)
	o.Stdout = slave
	code, _, _, err := run(t, context.Background(), o)
	if err != nil || code != 0 {
		t.Fatalf("%d %v", code, err)
	}
	readUntil(t, master, "a pipe")
}

// TestAttachTerminal joins a user's terminal to a shell's: typing reaches
// the shell, its output the user, its size follows the user's.
func TestAttachTerminal(t *testing.T) {
	userMaster, _, userSide := newPty(t)        // the user types on userMaster
	shellMaster, master, shellSide := newPty(t) // the shell's terminal
	if err := userMaster.Resize(console.WinSize{Height: 33, Width: 111}); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	ts, err := attachTerminal(master, userSide, &out)
	if err != nil {
		t.Fatal(err)
	}
	if size, err := shellMaster.Size(); err != nil || size.Height != 33 || size.Width != 111 {
		t.Errorf("the shell's terminal: %+v %v", size, err)
	}
	if _, err := userMaster.Write([]byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	readUntil(t, shellSide, "typed")
	if _, err := shellSide.Write([]byte("printed\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, long, "printed", func() bool { return strings.Contains(out.String(), "printed") })
	if err := userMaster.Resize(console.WinSize{Height: 44, Width: 122}); err != nil {
		t.Fatal(err)
	}
	ts.resize()
	if size, _ := shellMaster.Size(); size.Height != 44 || size.Width != 122 {
		t.Errorf("after a resize: %+v", size)
	}
	ts.restore()
	// The shell's side closed: its last output is in, the copy ends.
	shellSide.Close()
	ts.finish()
	select {
	case <-ts.out:
	default:
		t.Error("the copy of the shell's output did not end")
	}
}

func TestWriteBundle(t *testing.T) {
	// A container's plan hides (and so makes) the default state dir and
	// opens the caches: the test's home's, never this user's.
	for _, v := range []string{"XDG_STATE_HOME", "XDG_CACHE_HOME", "CSHELL_CACHE_DIR"} {
		t.Setenv(v, "")
	}
	o := processOptions(t, `echo hi`)
	t.Cleanup(func() { forgetTrust(DefaultStateDir(o.FS.Home)) })
	if err := WriteBundle(o, filepath.Join(t.TempDir(), "bundle")); !errors.Is(err, ErrUsage) {
		t.Errorf("a bundle of a process-group shell: %v", err)
	}
	o.Isolation = container.Container
	dir := filepath.Join(t.TempDir(), "bundle")
	var stderr bytes.Buffer
	o.Stderr = &stderr
	if err := WriteBundle(o, dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil || !bytes.Contains(b, []byte(`"echo hi"`)) {
		t.Errorf("config.json: %.200s %v", b, err)
	}
	// A folder that holds something is refused, and left as it was.
	if err := WriteBundle(o, dir); err == nil || !strings.Contains(err.Error(), "give --bundle a new or empty directory") {
		t.Errorf("again: %v", err)
	}
}
