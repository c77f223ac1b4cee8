//go:build e2e

package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort finds a port free on the host's loopback right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sinkServer is a python server for inside a shell: for each connection it
// reads until EOF, then answers the sha256 of what it read and its length
// (so it needs the client's half-close), or, when the first line is
// "GET n", sends n random-looking bytes instead.
const sinkServer = `import hashlib, socket, sys, threading
def serve(c):
    f = c.makefile("rb")
    first = f.readline()
    if first.startswith(b"GET "):
        n = int(first.split()[1])
        block = hashlib.sha256(b"seed").digest() * 2048
        while n > 0:
            k = min(n, len(block)); c.sendall(block[:k]); n -= k
        c.close(); return
    h = hashlib.sha256(first); total = len(first)
    while True:
        b = f.read(1 << 16)
        if not b: break
        h.update(b); total += len(b)
    c.sendall(("%s %d\n" % (h.hexdigest(), total)).encode()); c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(128)
print("listening", flush=True)
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
`

func TestExposeServesFiles(t *testing.T) {
	e := newBG(t)
	writeFile(t, filepath.Join(e.wd, "index.html"), "hello from inside\n")
	port := freePort(t)
	r := e.cs("run", "-d", "--expose", fmt.Sprint(port), "--ready", "--", fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port))
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("exposed: 127.0.0.1:%d -> %d\n", port, port)) {
		t.Fatalf("run: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	if err != nil {
		t.Fatalf("GET right after --ready: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from inside\n" {
		t.Errorf("body %q", body)
	}
	var list []map[string]any
	json.Unmarshal([]byte(e.cs("ps", "--json").stdout), &list)
	if len(list) != 1 || fmt.Sprint(list[0]["exposed"]) != fmt.Sprintf("[map[listen:127.0.0.1:%d port:%d]]", port, port) {
		t.Errorf("ps --json exposed: %v", list)
	}
	if !strings.Contains(e.cs("ps").stdout, fmt.Sprintf("127.0.0.1:%d->%d", port, port)) {
		t.Errorf("ps does not show the exposed address")
	}

	// A foreground shell of the same session reaches it at 127.0.0.1:PORT.
	fg := e.cs("run", "--", fmt.Sprintf(`python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:%d/index.html").read().decode(), end="")'`, port))
	if fg.stdout != "hello from inside\n" {
		t.Errorf("foreground reach: code %d out %q err %q", fg.code, fg.stdout, fg.stderr)
	}
	// ... but not from another session.
	other := run(t, call{args: []string{"--state-dir", e.state, "run", "--session", "other", "--", fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d", port)}, dir: e.wd})
	if other.code == 0 {
		t.Errorf("a foreground shell of another session reached the port")
	}

	// The port closes with the shell.
	e.cs("kill", "1")
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Errorf("port %d still open after kill", port)
	}
}

func TestExposeRefusals(t *testing.T) {
	e := newBG(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	marker := fmt.Sprintf("%d", 510000+os.Getpid()%10000)
	r := e.cs("run", "-d", "--expose", fmt.Sprint(busyPort), "--", "sleep "+marker)
	if r.code != 1 || !strings.Contains(r.stderr, fmt.Sprintf("port %d is already in use on 127.0.0.1", busyPort)) {
		t.Errorf("port in use: code %d err %q", r.code, r.stderr)
	}
	if len(hostProcesses("sleep "+marker)) != 0 || strings.TrimSpace(e.cs("ps", "--all", "--json").stdout) != "[]" {
		t.Errorf("a refused start left something behind")
	}
	r = e.cs("run", "-d", "--expose", "0.0.0.0:"+fmt.Sprint(freePort(t)), "--", "true")
	if r.code != 1 || !strings.Contains(r.stderr, "--expose-public") {
		t.Errorf("public without consent: code %d err %q", r.code, r.stderr)
	}
	// 192.0.2.1 is for documentation only: no machine has it.
	r = e.cs("run", "-d", "--expose", "192.0.2.1:"+fmt.Sprint(freePort(t)), "--expose-public", "--", "true")
	if r.code != 1 || !strings.Contains(r.stderr, "no network interface of this machine has the address 192.0.2.1") ||
		strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("an address this machine lacks: code %d err %q", r.code, r.stderr)
	}
	for _, bad := range []string{"0", "70000", "abc", "host:", "127.0.0.1:", ":80", "example.com:80", "::1:80"} {
		r := e.cs("run", "-d", "--expose", bad, "--", "true")
		if r.code != 2 || !strings.HasPrefix(r.stderr, "cshell: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("--expose %q: code %d err %q", bad, r.code, r.stderr)
		}
	}
	if r := e.cs("run", "-d", "--ready", "--", "true"); r.code != 2 {
		t.Errorf("--ready without --expose: code %d", r.code)
	}
}

func TestExposeTransfers(t *testing.T) {
	e := newBG(t)
	writeFile(t, filepath.Join(e.wd, "sink.py"), sinkServer)
	port := freePort(t)
	r := e.cs("run", "-d", "--expose", fmt.Sprint(port), "--ready", "--", fmt.Sprintf("python3 sink.py %d", port))
	if r.code != 0 {
		t.Fatalf("run: %q", r.stderr)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	// Upload 100 MB, half-close, and read the server's digest.
	const size = 100 << 20
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	w := io.MultiWriter(c, h)
	if _, err := io.CopyN(w, rand.Reader, size); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	reply, err := io.ReadAll(c)
	c.Close()
	if want := fmt.Sprintf("%s %d\n", hex.EncodeToString(h.Sum(nil)), size); string(reply) != want || err != nil {
		t.Errorf("upload: server saw %q, want %q (%v)", reply, want, err)
	}

	// Download 100 MB and compare with what the server sends.
	c, err = net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET %d\n", size)
	got := sha256.New()
	n, err := io.Copy(got, c)
	c.Close()
	block := sha256.Sum256([]byte("seed"))
	want := sha256.New()
	for left := int64(size); left > 0; {
		chunk := bytesRepeat(block[:], 2048)
		k := min(left, int64(len(chunk)))
		want.Write(chunk[:k])
		left -= k
	}
	if n != size || err != nil || hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(want.Sum(nil)) {
		t.Errorf("download: %d bytes, err %v, digest mismatch %v", n, err, hex.EncodeToString(got.Sum(nil)) != hex.EncodeToString(want.Sum(nil)))
	}

	// 50 parallel connections all succeed.
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err == nil {
				msg := fmt.Sprintf("connection %d\n", i)
				c.Write([]byte(msg))
				c.(*net.TCPConn).CloseWrite()
				reply, _ := io.ReadAll(c)
				c.Close()
				sum := sha256.Sum256([]byte(msg))
				if string(reply) == fmt.Sprintf("%s %d\n", hex.EncodeToString(sum[:]), len(msg)) {
					return
				}
			}
			mu.Lock()
			failed++
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	if failed > 0 {
		t.Errorf("%d of 50 parallel connections failed", failed)
	}
}

func bytesRepeat(b []byte, n int) []byte {
	out := make([]byte, 0, len(b)*n)
	for i := 0; i < n; i++ {
		out = append(out, b...)
	}
	return out
}

func TestExposeBeforeListenAndReady(t *testing.T) {
	e := newBG(t)
	port := freePort(t)
	writeFile(t, filepath.Join(e.wd, "index.html"), "late\n")
	// Nothing listens inside yet: a connection ends cleanly, it does not hang.
	id := e.start(fmt.Sprintf("sleep 3; exec python3 -m http.server %d --bind 127.0.0.1", port), "--expose", fmt.Sprint(port))
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("the host listener refused: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	t0 := time.Now()
	_, err = c.Read(make([]byte, 1))
	c.Close()
	if ne, ok := err.(net.Error); (ok && ne.Timeout()) || time.Since(t0) > 2*time.Second {
		t.Errorf("a connection before the server listens hung (%v after %s)", err, time.Since(t0))
	}
	// wait-ready waits for the port.
	r := e.cs("wait-ready", id, "--timeout", "10")
	if r.code != 0 {
		t.Errorf("wait-ready: code %d err %q", r.code, r.stderr)
	}
	e.cs("kill", id, "--grace", "0")

	// --ready answers only once the server listens (after 2 s here), and a
	// request right after succeeds.
	port = freePort(t)
	t0 = time.Now()
	r = e.cs("run", "-d", "--expose", fmt.Sprint(port), "--ready", "--", fmt.Sprintf("sleep 2; exec python3 -m http.server %d --bind 127.0.0.1", port))
	el := time.Since(t0)
	if r.code != 0 || el < 2*time.Second {
		t.Errorf("--ready answered after %s (code %d, err %q)", el, r.code, r.stderr)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/index.html", port))
	if err != nil {
		t.Fatalf("GET right after --ready: %v", err)
	}
	resp.Body.Close()

	// --ready-log waits for a line.
	t0 = time.Now()
	r = e.cs("run", "-d", "--ready-log", "^up and running$", "--", "sleep 1; echo 'up and running'; sleep 30")
	if el := time.Since(t0); r.code != 0 || el < time.Second {
		t.Errorf("--ready-log answered after %s (code %d, err %q)", el, r.code, r.stderr)
	}
	// A ready timeout: exit 1, a sentence, the id in the answer, the shell runs on.
	r = e.cs("--json", "run", "-d", "--ready-log", "never", "--ready-timeout", "1", "--", "sleep 30")
	var ans map[string]any
	json.Unmarshal([]byte(r.stdout), &ans)
	if r.code != 1 || ans["id"] == nil || !strings.Contains(r.stderr, `no line of output matches "never"`) {
		t.Errorf("ready timeout: code %d out %q err %q", r.code, r.stdout, r.stderr)
	} else if m := e.meta(fmt.Sprint(ans["id"])); m["status"] != "running" {
		t.Errorf("the shell did not keep running: %v", m["status"])
	}
	// A shell that ends while waiting: the answer is its end.
	r = e.cs("run", "-d", "--ready-log", "never", "--", "echo bye; exit 4")
	if r.code != 4 || !strings.Contains(r.stdout, "exited with 4") || !strings.Contains(r.stdout, "bye") {
		t.Errorf("ended while waiting: code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
}

func TestExposeProcessIsolation(t *testing.T) {
	e := newBG(t)
	port := freePort(t)
	r := e.cs("run", "-d", "--isolation", "process", "--expose", fmt.Sprint(port), "--ready", "--", fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port))
	if r.code != 0 || !strings.Contains(r.stdout, "reachable directly") {
		t.Fatalf("code %d out %q err %q", r.code, r.stdout, r.stderr)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
}

// TestReachEndsWithShell checks that a foreground shell's way to a
// background shell's port ends with that shell: what binds the port on the
// host afterwards stays out of reach.
func TestReachEndsWithShell(t *testing.T) {
	e := newBG(t)
	port := freePort(t)
	id := e.start(fmt.Sprintf("python3 -m http.server %d --bind 127.0.0.1", port), "--expose", fmt.Sprint(port), "--ready")
	// The foreground shell tries once the test has put a host server on
	// the port (the go file appears in its working directory). The relay
	// inside it accepts and then drops the connection, so a write can
	// race the close: SIGPIPE is ignored so that bash reports it and goes on.
	probe := fmt.Sprintf(`trap '' PIPE; echo waiting; while [ ! -e go ]; do sleep 0.05; done
exec 3<>/dev/tcp/127.0.0.1/%d && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3; echo done`, port)
	fg := start(t, call{args: []string{"--state-dir", e.state, "run", "--", probe}, dir: e.wd})
	fg.out.waitFor(t, "waiting", 10*time.Second)
	if r := e.cs("kill", id, "--grace", "0"); r.code != 0 {
		t.Fatalf("kill: %q", r.stderr)
	}
	greeter(t, fmt.Sprintf("127.0.0.1:%d", port), "HTTP/1.0 200 OK\r\n\r\nhost-secret\n")
	writeFile(t, filepath.Join(e.wd, "go"), "")
	code := fg.wait(t, 20*time.Second)
	if out := fg.out.text(); strings.Contains(out, "host-secret") || !strings.Contains(out, "done") {
		t.Errorf("the foreground shell after the background one ended: exit %d, %q", code, out)
	}
}
