//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The network tests reach a remote host that hack/test.sh makes: a server
// in a network namespace of its own, over a veth pair in 198.18.0.0/15
// (CSHELL_TEST_REMOTE, ADDRESS:PORT, serving /hello). Nothing else.

func remote(t *testing.T) (addr, hostPort string) {
	t.Helper()
	requireLinux(t)
	hp := os.Getenv("CSHELL_TEST_REMOTE")
	if hp == "" {
		t.Skip("CSHELL_TEST_REMOTE is not set: hack/test.sh makes the remote host (a network namespace with a server on 198.18.0.2:8080)")
	}
	a, _, _ := strings.Cut(hp, ":")
	return a, hp
}

// goFetchVar makes the test binary a Go HTTP client (goFetch): it ignores
// the proxy variables, as any program with a transport of its own does.
const goFetchVar = "CSHELL_E2E_GO_FETCH"

func goFetch(url string) int {
	c := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}
	r, err := c.Get(url)
	if err != nil {
		fmt.Printf("go error: %v\n", err)
		return 1
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	fmt.Printf("go %d %s", r.StatusCode, b)
	return 0
}

var (
	helperOnce sync.Once
	helperPath string
)

// helper copies the test binary where a shell sees it (the host's
// /var/tmp; /tmp is the shell's own), once.
func helper(t *testing.T) string {
	t.Helper()
	helperOnce.Do(func() {
		self, err := os.Executable()
		if err != nil {
			return
		}
		b, err := os.ReadFile(self)
		if err != nil {
			return
		}
		p := fmt.Sprintf("/var/tmp/cshell-e2e-helper-%d", os.Getpid())
		if os.WriteFile(p, b, 0o755) == nil {
			helperPath = p
		}
	})
	if helperPath == "" {
		t.Fatal("could not copy the test binary to /var/tmp")
	}
	return helperPath
}

func removeHelper() {
	if helperPath != "" {
		os.Remove(helperPath)
	}
}

// TestEgressWithoutProxy: programs that ignore the proxy variables reach
// an allowed destination by address and by an allowed name, in the same
// sandbox; a refused destination fails at once and is recorded, a name
// not allowed does not resolve and is recorded; the shell's own loopback
// stays its own.
func TestEgressWithoutProxy(t *testing.T) {
	addr, hp := remote(t)
	name := "remote.test"
	byName := name + ":" + strings.Split(hp, ":")[1]
	goBin := helper(t)
	noProxy := "env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy -u NODE_USE_ENV_PROXY "
	for _, target := range []string{hp, byName} {
		t.Run(target, func(t *testing.T) {
			url := "http://" + target + "/hello"
			host, port, _ := strings.Cut(target, ":")
			script := strings.Join([]string{
				"curl -sS --noproxy '*' " + url,
				noProxy + `python3 -c "import socket; s=socket.create_connection(('` + host + `', ` + port + `)); s.sendall(b'GET /hello HTTP/1.0\r\n\r\n'); print(s.makefile('rb').read().decode().split('\r\n\r\n', 1)[1], end='')"`,
				noProxy + `node -e "fetch('` + url + `').then(r => r.text()).then(t => process.stdout.write(t))"`,
				noProxy + goFetchVar + "=" + url + " " + goBin,
			}, "; ")
			r := run(t, call{args: []string{"run", "--allow-host", hp, "--allow-host", byName, "--add-host", name + ":" + addr, "--", script}, dir: t.TempDir()})
			want := "hello from the remote\nhello from the remote\nhello from the remote\ngo 200 hello from the remote\n"
			if r.code != 0 || r.stdout != want {
				t.Errorf("without the proxy: code %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}

	// Refused destinations fail at once (reset: curl's connect, 7, or its
	// first read, 56, hears it), each recorded with its host and port; a
	// name that is not allowed does not resolve.
	began := time.Now()
	r := run(t, call{args: []string{"run", "--allow-host", hp, "--", "curl -sS --noproxy '*' http://" + addr + ":8081/; echo curl=$?; getent hosts not-allowed.test; echo getent=$?"}, dir: t.TempDir()})
	if !strings.Contains(r.stdout, "curl=7") && !strings.Contains(r.stdout, "curl=56") || !strings.Contains(r.stdout, "getent=2") || time.Since(began) > 10*time.Second {
		t.Errorf("refused: %q after %s", r.stdout, time.Since(began))
	}
	for _, want := range []string{"refused connect " + addr + ":8081 (not in the allow list)", "refused to resolve not-allowed.test"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r.stderr)
		}
	}

	// A background shell records them in violations.log, as the proxy's.
	state := t.TempDir()
	bg := run(t, call{args: []string{"--state-dir", state, "run", "-d", "--", "curl -sS --noproxy '*' http://" + hp + "/hello; getent hosts not-allowed.test; sleep 300"}, dir: t.TempDir()})
	if bg.code != 0 {
		t.Fatalf("run -d: %+v", bg)
	}
	var out string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && strings.Count(out, "violation:") < 2; time.Sleep(100 * time.Millisecond) {
		out += run(t, call{args: []string{"--state-dir", state, "output", "1"}}).stdout
	}
	run(t, call{args: []string{"--state-dir", state, "kill", "1", "--grace", "0"}})
	b, _ := os.ReadFile(filepath.Join(state, "shells", "1", "violations.log"))
	var hosts []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v struct {
			Host   string `json:"host"`
			Port   int    `json:"port"`
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(l), &v) == nil {
			hosts = append(hosts, fmt.Sprintf("%s %s:%d", v.Method, v.Host, v.Port))
		}
	}
	if got := strings.Join(hosts, ", "); !strings.Contains(got, "connect "+hp) || !strings.Contains(got, "DNS not-allowed.test:0") {
		t.Errorf("violations.log: %s (output %q)", got, out)
	}

	// UDP to anything but the resolver: the datagram goes nowhere, and
	// is recorded.
	r = run(t, call{args: []string{"run", "--allow-host", hp, "--", `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.connect(('` + addr + `', 9999)); s.send(b'x')"; sleep 0.5`}, dir: t.TempDir()})
	if !strings.Contains(r.stderr, "refused UDP "+addr+":9999") {
		t.Errorf("UDP: %+v", r)
	}

	// The shell's own servers on loopback work as ever.
	r = run(t, call{args: []string{"run", "--", "python3 -m http.server 9123 --bind 127.0.0.1 >/dev/null 2>&1 & for i in $(seq 50); do c=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' http://127.0.0.1:9123/); [ $c = 200 ] && break; sleep 0.1; done; echo $c; kill %1"}, dir: t.TempDir()})
	if r.stdout != "200\n" {
		t.Errorf("loopback inside: %+v", r)
	}
}

// TestGrants: cshell allow reaches a running background shell at its
// next connection, and a foreground shell of the session, not another
// session's; --revoke; network.deny beats a grant; a project can turn
// grants off.
func TestGrants(t *testing.T) {
	_, hp := remote(t)
	state := t.TempDir()
	dir := t.TempDir()
	cs := func(args ...string) result {
		return run(t, call{args: append([]string{"--state-dir", state}, args...), dir: dir})
	}
	fetch := "curl -s --noproxy '*' -o /dev/null -w '%{http_code}\\n' http://" + hp + "/hello"
	if r := cs("run", "-d", "--name", "poller", "--", "while :; do "+fetch+"; sleep 0.2; done"); r.code != 0 {
		t.Fatalf("run -d: %+v", r)
	}
	defer cs("kill", "poller", "--grace", "0")
	waitOutput := func(want string) string {
		t.Helper()
		var out string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			o := cs("output", "poller").stdout
			out += o
			if strings.Contains(o, want) {
				return out
			}
		}
		t.Fatalf("the poller never printed %q: %q", want, out)
		return out
	}
	waitOutput("000")
	if r := cs("allow", hp); r.code != 0 || r.stdout != "allowed "+hp+" in session default\n" {
		t.Fatalf("allow: %+v", r)
	}
	waitOutput("200")
	if r := cs("run", "--", fetch); r.stdout != "200\n" {
		t.Errorf("a foreground shell of the session: %+v", r)
	}
	if r := run(t, call{args: []string{"--state-dir", state, "run", "--", fetch}, dir: dir, env: []string{"CSHELL_SESSION=other"}}); r.stdout != "000\n" {
		t.Errorf("another session's shell: %+v", r)
	}
	var list []map[string]any
	if r := cs("--json", "allow", "--list"); json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 || list[0]["pattern"] != hp {
		t.Errorf("allow --list --json: %+v", r)
	}
	if r := cs("allow", "--revoke", hp); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}
	waitOutput("000")
	if r := cs("allow", "--revoke", hp); r.code != 1 || !strings.Contains(r.stderr, "is not granted") {
		t.Errorf("revoking twice: %+v", r)
	}
	for _, bad := range [][]string{{"allow"}, {"allow", "a b"}, {"allow", "--list", "x"}, {"allow", "--session", "a/b", "x"}} {
		if r := cs(bad...); r.code != 2 {
			t.Errorf("%v: %+v, want exit 2", bad, r)
		}
	}

	// network.deny beats a grant; a project turns grants off.
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"network": {"deny": ["`+hp+`"]}}`)
	cs("allow", hp)
	if r := cs("--config", cfg, "run", "--", fetch); r.stdout != "000\n" || !strings.Contains(r.stderr, "network.deny") {
		t.Errorf("deny against a grant: %+v", r)
	}
	proj := t.TempDir()
	writeFile(t, filepath.Join(proj, ".cshell.json"), `{"network": {"allowGrants": false}}`)
	if r := run(t, call{args: []string{"--state-dir", state, "run", "--", fetch}, dir: proj}); r.stdout != "000\n" {
		t.Errorf("a project without grants: %+v", r)
	}
	writeFile(t, filepath.Join(proj, ".cshell.json"), `{"network": {"allowGrants": true}}`)
	writeFile(t, cfg, `{"network": {"allowGrants": false}}`)
	if r := run(t, call{args: []string{"--state-dir", state, "--config", cfg, "run", "--", fetch}, dir: proj}); r.stdout != "000\n" || !strings.Contains(r.stderr, "allowGrants") {
		t.Errorf("a project turning grants back on: %+v", r)
	}
}

// TestHeldRequests: with network.askSeconds a refused request waits for a
// grant: it proceeds when one comes, fails when none does; each refusal
// is an event of cshell events.
func TestHeldRequests(t *testing.T) {
	_, hp := remote(t)
	state := t.TempDir()
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"network": {"askSeconds": 3}}`)
	fetch := "curl -s --noproxy '*' -o /dev/null -w '%{http_code}\\n' http://" + hp + "/hello"
	go func() {
		time.Sleep(time.Second)
		run(t, call{args: []string{"--state-dir", state, "allow", hp}})
	}()
	began := time.Now()
	r := run(t, call{args: []string{"--state-dir", state, "--config", cfg, "run", "--", fetch}, dir: dir})
	if r.stdout != "200\n" || time.Since(began) < 900*time.Millisecond {
		t.Errorf("a held request and a grant: %+v after %s", r, time.Since(began))
	}
	run(t, call{args: []string{"--state-dir", state, "allow", "--revoke", hp}})
	began = time.Now()
	r = run(t, call{args: []string{"--state-dir", state, "--config", cfg, "run", "--", fetch}, dir: dir})
	if r.stdout != "000\n" || time.Since(began) < 2500*time.Millisecond {
		t.Errorf("a held request without a grant: %+v after %s", r, time.Since(began))
	}
	ev := run(t, call{args: []string{"--state-dir", state, "--json", "events"}})
	var refused int
	for _, l := range strings.Split(strings.TrimSpace(ev.stdout), "\n") {
		var n map[string]any
		if json.Unmarshal([]byte(l), &n) == nil && n["event"] == "refused" && n["host"] == strings.Split(hp, ":")[0] && n["session"] == "default" {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no refused event: %s", ev.stdout)
	}
}

// TestServeAsksTheUser: a serve client that can be asked is asked about
// a refused host, in each protocol generation: the 2026-07-28 client
// answers the call's input request and calls again (the Go SDK's client
// does that by itself), the 2025-11-25 one an elicitation request.
// "Allow for this session" lets the held request through, and later ones
// too without a question; a background shell's refusal is asked about
// too (2025-11-25: only a client that opened with initialize takes a
// request of the server's outside a call).
func TestServeAsksTheUser(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) { testServeAsks(t, version) })
	}
}

func testServeAsks(t *testing.T, version string) {
	_, hp := remote(t)
	addr, port, _ := strings.Cut(hp, ":")
	var mu sync.Mutex
	var asked []string
	state := t.TempDir()
	cmd := exec.Command(cshellBin, "--state-dir", state, "serve", "--session", "asked", "--add-host", "bg.test:"+addr)
	cmd.Dir = t.TempDir()
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "cshell-e2e", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, r.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "session"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		cs.Close()
		// A named session's shells outlive their server for a while
		// (shells.reattachSeconds): stopped here.
		_ = exec.Command(cshellBin, "--state-dir", state, "kill", "--session", "asked", "--grace", "0", "all").Run()
		waitSupervisors(t, state)
	}()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated %s, want %s", got, version)
	}
	questions := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
	fetch := "curl -s --noproxy '*' -o /dev/null -w '%{http_code}' http://" + hp + "/hello"
	bash := func(args map[string]any) string {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return r.Content[0].(*mcp.TextContent).Text
	}
	if got := bash(map[string]any{"command": "echo before; " + fetch}); got != "before\n200\nexit code 0" {
		t.Errorf("the held request after the answer: %q", got)
	}
	if q := questions(); len(q) != 1 || !strings.Contains(q[0], hp) || !strings.Contains(q[0], "curl") {
		t.Errorf("questions: %q", q)
	}
	if got := bash(map[string]any{"command": fetch}); got != "200\nexit code 0" {
		t.Errorf("a later request: %q", got)
	}
	if q := questions(); len(q) != 1 {
		t.Errorf("asked again: %q", q)
	}
	if r := run(t, call{args: []string{"--state-dir", state, "allow", "--list", "--session", "asked"}}); !strings.Contains(r.stdout, "allowed "+hp) {
		t.Errorf("the session's grants: %+v", r)
	}
	if version != "2025-11-25" {
		return
	}
	// A background shell's refused name: the name resolves while the
	// user is asked, and its connect waits for the answer.
	text := bash(map[string]any{"command": "curl -s --noproxy '*' -o /dev/null -w '%{http_code}\\n' http://bg.test:" + port + "/hello; sleep 300", "run_in_background": true})
	if !strings.HasPrefix(text, "started shell 1") {
		t.Fatalf("background: %q", text)
	}
	var out string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !strings.Contains(out, "200"); time.Sleep(200 * time.Millisecond) {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "bash_output", Arguments: map[string]any{"bash_id": "1"}})
		if err != nil {
			t.Fatal(err)
		}
		out += r.Content[0].(*mcp.TextContent).Text
	}
	if q := questions(); !strings.Contains(out, "200") || len(q) != 2 || !strings.Contains(q[1], "shell 1") || !strings.Contains(q[1], "bg.test:"+port) {
		t.Errorf("background: output %q, questions %q", out, q)
	}
}
