//go:build e2e

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// The end-to-end tests run the built binary as a user would. They run as
// root and, in CI, again as an unprivileged user (hack/test.sh). Set
// CSHELL_BIN to test a binary built elsewhere; otherwise TestMain builds one.
var cshellBin string

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if url := os.Getenv(goFetchVar); url != "" {
		return goFetch(url) // the test binary as a Go client inside a shell
	}
	if addr := os.Getenv("CSHELL_E2E_CRED_SERVE"); addr != "" {
		return serveCredentials(addr, os.Getenv("CSHELL_E2E_CRED_DIR")) // the remote credential server (hack/test.sh)
	}
	defer removeHelper()
	cshellBin = os.Getenv("CSHELL_BIN")
	if cshellBin == "" {
		dir, err := os.MkdirTemp("", "cshell-e2e-bin-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		cshellBin = filepath.Join(dir, "cshell")
		out, err := exec.Command("go", "build", "-o", cshellBin, ".").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "build cshell: %v\n%s", err, out)
			return 1
		}
	}
	who := "root"
	if os.Geteuid() != 0 {
		who = fmt.Sprintf("unprivileged uid %d", os.Geteuid())
	}
	fmt.Printf("e2e: testing %s as %s\n", cshellBin, who)
	code := m.Run()
	if left := leftBehind(); len(left) > 0 {
		fmt.Printf("--- FAIL: TestNothingLeftBehind\n")
		for _, l := range left {
			fmt.Printf("    %s\n", l)
		}
		return 1
	}
	fmt.Printf("--- PASS: TestNothingLeftBehind (after all tests: no process, no container state)\n")
	return code
}

// leftBehind lists what the tests left: container inits started by this
// binary that still run, and container state whose owner died and that a
// later start did not collect.
func leftBehind() []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	// One more run collects the state of containers whose cshell died.
	_ = exec.Command(cshellBin, "run", "--", "true").Run()
	var left []string
	out, _ := exec.Command("ps", "-eo", "pid=,ppid=,args=").Output()
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 4 || f[2] != "/.cshell/cshell" || f[3] != "__pid1" {
			continue
		}
		parent, _ := os.ReadFile("/proc/" + f[1] + "/cmdline")
		if strings.HasPrefix(string(parent), cshellBin+"\x00") {
			left = append(left, "container init still running: "+strings.Join(f, " "))
		}
	}
	dir := "/run/cshell/containers"
	if os.Geteuid() != 0 {
		dir = filepath.Join(os.TempDir(), fmt.Sprintf("cshell-%d", os.Geteuid()), "containers")
		if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
			dir = filepath.Join(x, "cshell", "containers")
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		parts := strings.SplitN(e.Name(), "-", 3)
		if len(parts) != 3 {
			continue
		}
		if _, err := os.Stat("/proc/" + parts[1]); os.IsNotExist(err) {
			left = append(left, "container state of a dead cshell: "+filepath.Join(dir, e.Name()))
		}
	}
	return left
}

// isolations the behavioural tests run under.
var isolations = []string{"container", "process"}

type result struct {
	stdout, stderr string
	code           int
}

// call describes one run of the binary.
type call struct {
	args  []string
	dir   string
	env   []string // added to the test's environment
	stdin string
}

func run(t *testing.T, c call) result {
	t.Helper()
	cmd := exec.Command(cshellBin, c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = strings.NewReader(c.stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run cshell %v: %v", c.args, err)
	}
	return result{out.String(), errb.String(), code}
}

// sh runs a shell command line under an isolation in dir.
func sh(t *testing.T, iso, dir, command string, extra ...string) result {
	t.Helper()
	args := append([]string{"run", "--isolation", iso}, extra...)
	args = append(args, "--", command)
	return run(t, call{args: args, dir: dir})
}

// varTmpDir makes a directory that the sandbox sees read-only (/tmp is
// private inside, /var/tmp is the host's), removed after the test.
func varTmpDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "cshell-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hostProcesses lists host processes whose command line starts with
// prefix (after the path of the program, if any).
func hostProcesses(prefix string) []string {
	out, _ := exec.Command("ps", "-eo", "pid=,args=").Output()
	var found []string
	for _, l := range strings.Split(string(out), "\n") {
		_, args, _ := strings.Cut(strings.TrimSpace(l), " ")
		if strings.HasPrefix(args, prefix) || strings.HasPrefix(filepath.Base(args), prefix) {
			found = append(found, strings.TrimSpace(l))
		}
	}
	return found
}

// waitGone waits until no host process carries marker.
func waitGone(t *testing.T, marker string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := hostProcesses(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes still running %s later: %v", within, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCount waits until exactly n host processes carry prefix.
func waitCount(t *testing.T, prefix string, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		got := hostProcesses(prefix)
		if len(got) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes %q on the host after %s, want %d: %v", len(got), prefix, within, n, got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// started is a cshell run in progress, read line by line.
type started struct {
	cmd *exec.Cmd
	out *lineReader
}

func start(t *testing.T, c call) *started {
	t.Helper()
	cmd := exec.Command(cshellBin, c.args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), c.env...)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &started{cmd: cmd, out: newLineReader(pr)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		pr.Close()
	})
	return s
}

func (s *started) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
		return s.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("cshell still running after %s; output so far: %q", within, s.out.text())
		return -1
	}
}

// lineReader collects output in the background and lets a test wait for
// a line.
type lineReader struct {
	buf  chan string
	seen strings.Builder
}

func newLineReader(r io.Reader) *lineReader {
	lr := &lineReader{buf: make(chan string, 1024)}
	go func() {
		b := make([]byte, 4096)
		var line []byte
		for {
			n, err := r.Read(b)
			for _, c := range b[:n] {
				line = append(line, c)
				if c == '\n' {
					lr.buf <- string(line)
					line = nil
				}
			}
			if err != nil {
				if len(line) > 0 {
					lr.buf <- string(line)
				}
				close(lr.buf)
				return
			}
		}
	}()
	return lr
}

func (lr *lineReader) waitFor(t *testing.T, want string, within time.Duration) {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-lr.buf:
			if !ok {
				t.Fatalf("output ended before %q; got %q", want, lr.seen.String())
			}
			lr.seen.WriteString(l)
			if strings.Contains(l, want) {
				return
			}
		case <-timer.C:
			t.Fatalf("no %q within %s; got %q", want, within, lr.seen.String())
		}
	}
}

func (lr *lineReader) text() string {
	for {
		select {
		case l, ok := <-lr.buf:
			if !ok {
				return lr.seen.String()
			}
			lr.seen.WriteString(l)
		default:
			return lr.seen.String()
		}
	}
}

func requireLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skipf("container isolation needs Linux; this is %s", runtime.GOOS)
	}
}

// greeter listens on addr (port 0: any free port) of this machine and
// writes text to every connection, then closes it; it returns the port.
func greeter(t *testing.T, addr, text string) int {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(text))
			c.Close()
		}
	}()
	return l.Addr().(*net.TCPAddr).Port
}

// httpGreeter serves body to every HTTP request on addr (a server that
// answers only once asked, as HTTP clients and proxies expect); it
// returns the port.
func httpGreeter(t *testing.T, addr, body string) int {
	t.Helper()
	return httpGreeterOn(t, addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
}

// httpGreeterHandler serves h on 127.0.0.1; it returns the port.
func httpGreeterHandler(t *testing.T, h http.Handler) int {
	t.Helper()
	return httpGreeterOn(t, "127.0.0.1:0", h)
}

func httpGreeterOn(t *testing.T, addr string, h http.Handler) int {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}
