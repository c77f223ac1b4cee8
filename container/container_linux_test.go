package container

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cshell/cshell/policy"
)

// The test binary is also the container's helper: libcontainer re-executes
// it as "init" (and the C PID 1 in pid1_linux.c runs before Go starts).
func init() { MaybeInit() }

func newTestRunner(t *testing.T) Runner {
	t.Helper()
	if rs := Restrictions(); len(rs) > 0 {
		t.Skipf("containers cannot start here: %s", rs[0].Sentence())
	}
	r, err := New(Container)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func startShell(t *testing.T, r Runner, command string, stdout *syncBuffer) Shell {
	t.Helper()
	wd := t.TempDir()
	sh, err := r.Start(&Spec{
		ID:      newTestID(t),
		Command: command,
		Env:     []string{"PATH=/usr/bin:/bin"},
		FS:      policy.Filesystem{Workdir: wd},
		Stdout:  stdout,
		Stderr:  stdout,
	})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh
}

func newTestID(t *testing.T) string {
	return "test-" + strconv.Itoa(os.Getpid()) + "-" + strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
}

// syncBuffer is a bytes.Buffer safe for the copying goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestContainerRunsAndExits(t *testing.T) {
	r := newTestRunner(t)
	var out syncBuffer
	sh := startShell(t, r, `echo "init=$(tr '\0' ' ' </proc/1/cmdline) host=$(hostname)"; exit 3`, &out)
	ex, err := sh.Wait()
	if err != nil || ex.Code != 3 {
		t.Fatalf("exit %+v, %v", ex, err)
	}
	bash := shellArgs(hostLookPath, "")[0]
	got := out.String()
	if !strings.HasPrefix(got, "init=/.cshell/cshell __pid1 --check=") ||
		!strings.HasSuffix(got, " "+bash+" -c "+`echo "init=$(tr '\0' ' ' </proc/1/cmdline) host=$(hostname)"; exit 3`+"  host=cshell\n") {
		t.Errorf("output %q", got)
	}
}

// TestPid1ChecksMounts runs the C PID 1 (the test binary, as "__pid1")
// with mount checks: the command runs only when every path is the file
// named, reached without a symbolic link.
func TestPid1ChecksMounts(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	id, err := identify(real)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := identify(dir)
	for _, c := range []struct {
		checks []string
		code   int
	}{
		{[]string{id + " " + real}, 0},
		{[]string{id + " " + real, other + " " + dir}, 0},
		{[]string{other + " " + real}, 125},
		{[]string{id + " " + real, id + " " + dir}, 125},
		{[]string{id + " " + filepath.Join(dir, "link")}, 125},
		{[]string{id + " " + filepath.Join(dir, "link", ".")}, 125},
		{[]string{"garbage"}, 125},
	} {
		args := []string{pid1Arg}
		for _, ch := range c.checks {
			args = append(args, "--check="+ch)
		}
		cmd := exec.Command(os.Args[0], append(args, "/bin/sh", "-c", "exit 0")...)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != c.code {
			t.Errorf("checks %q: exit %d, want %d (%s)", c.checks, code, c.code, out)
		}
		if c.code == 125 && c.checks[0] != "garbage" && !strings.Contains(string(out), "is not what cshell bound there") {
			t.Errorf("checks %q: %q", c.checks, out)
		}
	}
	if _, err := identify(filepath.Join(dir, "link")); err == nil {
		t.Errorf("identify followed a link")
	}
}

func TestContainerSignalReachesGroup(t *testing.T) {
	r := newTestRunner(t)
	var out syncBuffer
	sh := startShell(t, r, `trap 'echo got-TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done`, &out)
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "ready") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := sh.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ex, _ := sh.Wait()
	if ex.Code != 7 || !strings.Contains(out.String(), "got-TERM") {
		t.Errorf("exit %+v output %q", ex, out.String())
	}
}

func TestContainerKillAndClose(t *testing.T) {
	r := newTestRunner(t)
	var out syncBuffer
	sh := startShell(t, r, `trap "" TERM; sleep 1000`, &out)
	if err := sh.Kill(); err != nil {
		t.Fatal(err)
	}
	ex, _ := sh.Wait()
	if ex.Code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit %+v", ex)
	}
	if err := sh.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	dir, _ := runtimeDir()
	if _, err := os.Stat(filepath.Join(dir, "containers", newTestID(t))); !os.IsNotExist(err) {
		t.Errorf("container state left after Close: %v", err)
	}
}
