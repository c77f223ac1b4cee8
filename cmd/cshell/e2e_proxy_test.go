//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// upstream is a server on the host's loopback that shells reach only
// through their proxy.
func upstream(t *testing.T, tls bool) (*httptest.Server, int) {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "upstream body %s\n", r.URL.Path) })
	var s *httptest.Server
	if tls {
		s = httptest.NewTLSServer(h) // a self-signed certificate
	} else {
		s = httptest.NewServer(h)
	}
	t.Cleanup(s.Close)
	return s, s.Listener.Addr().(*net.TCPAddr).Port
}

// viaProxy is curl through the shell's proxy; --noproxy ” because the
// shell's NO_PROXY lists 127.0.0.1, which here is the test's upstream.
func viaProxy(args string) string {
	return `curl -sS --noproxy '' --max-time 10 ` + args
}

func TestProxyReachesAllowedHosts(t *testing.T) {
	_, port := upstream(t, false)
	_, tlsPort := upstream(t, true)
	allow := []string{"--allow-host", fmt.Sprintf("127.0.0.1:%d", port), "--allow-host", fmt.Sprintf("127.0.0.1:%d", tlsPort)}
	wd := t.TempDir()
	cmd := strings.Join([]string{
		`test "$HTTP_PROXY" = http://127.0.0.1:3128 && test "$https_proxy" = http://127.0.0.1:3128 && test "$NO_PROXY" = localhost,127.0.0.1,::1 && echo env-ok`,
		viaProxy(fmt.Sprintf("-x http://127.0.0.1:3128 http://127.0.0.1:%d/plain", port)),
		viaProxy(fmt.Sprintf("-k -x http://127.0.0.1:3128 https://127.0.0.1:%d/connect", tlsPort)),
		viaProxy(fmt.Sprintf("--socks5-hostname 127.0.0.1:3128 http://127.0.0.1:%d/socks", port)),
	}, "; ")
	r := run(t, call{args: append(append([]string{"run"}, allow...), "--", cmd), dir: wd})
	want := "env-ok\nupstream body /plain\nupstream body /connect\nupstream body /socks\n"
	if r.stdout != want {
		t.Errorf("got %q (stderr %q), want %q", r.stdout, r.stderr, want)
	}
	// Without the proxy the upstream is out of reach: loopback is the shell's own.
	r = run(t, call{args: append(append([]string{"run"}, allow...), "--", fmt.Sprintf("curl -sS --max-time 5 http://127.0.0.1:%d/direct", port)), dir: wd})
	if r.code == 0 || strings.Contains(r.stdout, "upstream body") {
		t.Errorf("reached the host's loopback without the proxy: %q", r.stdout)
	}
}

func TestProxyRefusesAndRecords(t *testing.T) {
	_, port := upstream(t, false)
	e := newBG(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, fmt.Sprintf(`{"network": {"allow": ["127.0.0.1:%d", "localhost", "*.example.test"], "deny": ["127.0.0.1:%d"]}}`, port, port))
	id := e.start(strings.Join([]string{
		viaProxy(fmt.Sprintf("-o /dev/null -w '%%{http_code}\\n' -x http://127.0.0.1:3128 http://127.0.0.1:%d/denied", port)),
		viaProxy(fmt.Sprintf("-o /dev/null -w '%%{http_code}\\n' -x http://127.0.0.1:3128 http://localhost:%d/rebind", port)),
		viaProxy("-o /dev/null -w '%{http_code}\\n' -x http://127.0.0.1:3128 http://not-allowed.test/"),
		"echo done",
	}, "; "), "--config", cfg)
	e.waitEnd(id)
	o := e.output(id)
	if !strings.HasPrefix(o["output"].(string), "403\n403\n403\ndone\n") {
		t.Errorf("output %q", o["output"])
	}
	b, _ := os.ReadFile(filepath.Join(e.state, "shells", id, "violations.log"))
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 3 {
		t.Fatalf("violations.log: %q", b)
	}
	var v []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("violation line %q: %v", l, err)
		}
		v = append(v, m)
	}
	if !strings.Contains(fmt.Sprint(v[0]["rule"]), "denied by network.deny") ||
		!strings.Contains(fmt.Sprint(v[1]["rule"]), "resolves to 127.0.0.1") ||
		fmt.Sprint(v[2]["rule"]) != "not in the allow list" || v[2]["host"] != "not-allowed.test" || v[2]["method"] != "GET" {
		t.Errorf("violations: %v", v)
	}
	if ov := o["violations"].([]any); len(ov) != 3 {
		t.Errorf("output --json violations: %v", ov)
	}
	// The human form shows each with its hint, once.
	e2 := newBG(t)
	id2 := e2.start(viaProxy("-x http://127.0.0.1:3128 http://blocked.test/")+"; sleep 30", "--allow-host", "example.test")
	deadline := time.Now().Add(10 * time.Second)
	var text string
	for time.Now().Before(deadline) {
		text += e2.cs("output", id2).stdout
		if strings.Contains(text, "violation:") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(text, "violation: refused GET blocked.test:80 (not in the allow list); allow it with --allow-host blocked.test") {
		t.Errorf("output: %q", text)
	}
}

func TestProxyTightenOnlyAndNoProxy(t *testing.T) {
	_, port := upstream(t, false)
	wd := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, fmt.Sprintf(`{"network": {"allow": ["127.0.0.1:%d"]}}`, port))
	get := viaProxy(fmt.Sprintf("-x http://127.0.0.1:3128 http://127.0.0.1:%d/x", port))
	if r := run(t, call{args: []string{"--config", cfg, "run", "--", get}, dir: wd}); r.stdout != "upstream body /x\n" {
		t.Fatalf("control: the global allow list does not work: %q %q", r.stdout, r.stderr)
	}
	// The project file may not add a host: its entry is ignored, with a warning,
	// and what is left allows nothing; with grants turned off too, nothing
	// ever can be, so there is no proxy.
	writeFile(t, filepath.Join(wd, ".cshell.json"), `{"network": {"allow": ["other.test"], "allowGrants": false}}`)
	r := run(t, call{args: []string{"--config", cfg, "run", "--", get + `; grep -c ':0C38 .* 0A ' /proc/net/tcp; env | grep -ci _proxy`}, dir: wd})
	if strings.Contains(r.stdout, "upstream body") || !strings.Contains(r.stderr, `ignored network.allow entry "other.test"`) {
		t.Errorf("a loosening project file: out %q err %q", r.stdout, r.stderr)
	}
	if !strings.HasSuffix(r.stdout, "0\n0\n") {
		t.Errorf("a shell that may reach nothing has a proxy: %q", r.stdout)
	}
}

func TestProxySurvivesGarbage(t *testing.T) {
	e := newBG(t)
	writeFile(t, filepath.Join(e.wd, "garbage.py"), `import os, socket
for i in range(300):
    s = socket.create_connection(("127.0.0.1", 3128))
    try:
        s.sendall(os.urandom(i * 7 % 3000) if i % 3 else (b"\x05" + os.urandom(i % 50)))
        s.shutdown(socket.SHUT_WR)
        s.settimeout(5)
        while s.recv(4096): pass
    except OSError:
        pass  # the proxy may hang up first: that is an answer too
    s.close()
s = socket.create_connection(("127.0.0.1", 3128))
s.sendall(b"GET http://blocked.test/ HTTP/1.1\r\nHost: blocked.test\r\n\r\n")
print(s.recv(100).split(b"\r\n")[0].decode(), flush=True)
print("sent garbage", flush=True)
`)
	id := e.start("python3 garbage.py && sleep 30", "--allow-host", "example.test")
	r := e.cs("wait-ready", id, "--log", "sent garbage", "--timeout", "60")
	if r.code != 0 {
		t.Fatalf("wait-ready: %q %q", r.stdout, r.stderr)
	}
	if m := e.meta(id); m["status"] != "running" {
		t.Errorf("the shell did not survive garbage on its proxy: %v", m["status_line"])
	}
	// The proxy still answers after all that.
	if out := e.output(id)["output"].(string); !strings.Contains(out, "HTTP/1.1 403 Forbidden") {
		t.Errorf("the proxy stopped answering: %q", out)
	}
	sup := int(e.meta(id)["supervisor_pid"].(float64))
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", sup)); err != nil {
		t.Errorf("the supervisor died")
	}
}

// TestViolationsBounded checks that a command refused in a loop with huge
// host names cannot fill the disk or one read: violations.log stops at
// 1 MiB with a last line saying so, a read returns at most 64 KiB of
// violations, and a line too long to show (an old log's) is passed over.
func TestViolationsBounded(t *testing.T) {
	e := newBG(t)
	flood := `python3 -c '
import socket
for i in range(2500):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT " + b"a." * 15000 + b"com:443 HTTP/1.1\r\n\r\n")
    s.recv(100); s.close()
print("flooded", flush=True)
'; sleep 30`
	id := e.start(flood, "--allow-host", "127.0.0.1:1")
	log := filepath.Join(e.state, "shells", id, "violations.log")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(e.cs("logs", id).stdout, "flooded") {
		if time.Now().After(deadline) {
			t.Fatalf("the flood did not end: %q", e.cs("logs", id).stdout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(b) > 1<<20+1024 || !strings.Contains(lines[len(lines)-1], "violations.log is full") {
		t.Errorf("violations.log holds %d bytes in %d lines, ending %.200q", len(b), len(lines), lines[len(lines)-1])
	}
	o := e.output(id)
	vs, _ := o["violations"].([]any)
	raw, _ := json.Marshal(vs)
	if len(vs) == 0 || len(raw) > 80<<10 {
		t.Errorf("one read returned %d violations in %d bytes", len(vs), len(raw))
	}
	if v, _ := vs[0].(map[string]any); len(fmt.Sprint(v["host"])) > 300 {
		t.Errorf("a recorded host of %d bytes", len(fmt.Sprint(v["host"])))
	}

	// An old log's over-long line does not hide what follows it.
	id2 := e.start("sleep 30", "--allow-host", "127.0.0.1:1")
	log2 := filepath.Join(e.state, "shells", id2, "violations.log")
	long := `{"host":"` + strings.Repeat("a", 70000) + `","port":443,"method":"CONNECT","rule":"not in the allow list"}`
	short := `{"host":"visible-refusal.example","port":443,"method":"CONNECT","rule":"not in the allow list"}`
	writeFile(t, log2, long+"\n"+short+"\n")
	if out := e.cs("output", id2).stdout; !strings.Contains(out, "visible-refusal.example") {
		t.Errorf("the refusal after a long line is not shown: %.300q", out)
	}
}
