//go:build e2e

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawServe is `cshell serve` driven with raw JSON-RPC lines, as a buggy or
// hostile client would drive it.
type rawServe struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	state string
	mu    sync.Mutex
}

// startRaw starts cshell GLOBALS serve SERVEARGS and opens the session.
func startRaw(t *testing.T, globals []string, serveArgs ...string) *rawServe {
	t.Helper()
	s := &rawServe{t: t, state: t.TempDir()}
	args := append(append([]string{"--state-dir", s.state}, globals...), "serve")
	s.cmd = exec.Command(cshellBin, append(args, serveArgs...)...)
	s.cmd.Dir = t.TempDir()
	s.cmd.Stderr = os.Stderr
	var err error
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewReaderSize(pipe, 1<<20)
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.in.Close()
		done := make(chan struct{})
		go func() { _ = s.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
		waitSupervisors(t, s.state)
	})
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`)
	s.reply()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawServe) send(line string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write %.80q: %v", line, err)
	}
}

// reply reads the next line from the server (within a minute).
func (s *rawServe) reply() map[string]any {
	s.t.Helper()
	type got struct {
		line []byte
		err  error
	}
	ch := make(chan got, 1)
	go func() { l, err := s.out.ReadBytes('\n'); ch <- got{l, err} }()
	select {
	case g := <-ch:
		var m map[string]any
		if g.err != nil || json.Unmarshal(g.line, &m) != nil {
			s.t.Fatalf("reply %.200q: %v", g.line, g.err)
		}
		return m
	case <-time.After(time.Minute):
		s.t.Fatal("no reply within a minute")
		return nil
	}
}

// tokenServer answers every request with the path it was asked.
func tokenServer(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Path) })}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// 100 foreground calls at once, each a sandbox of its own with its
// socket factory (the proxy listens through it), its pipes and its
// filter's listener: each answer carries its own token, fetched through
// its own proxy, and no other. A descriptor closed while another start
// reused its number crossed the shells' pipes (an eventfd written after
// its close, 8 bytes into another shell's init pipe).
func TestServeConcurrentCalls(t *testing.T) {
	requireLinux(t)
	rounds := 2
	if n, err := strconv.Atoi(os.Getenv("CSHELL_E2E_CONCURRENT_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	const calls = 100
	port := tokenServer(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"maxForegroundCalls": 128}}`)
	for round := 0; round < rounds; round++ {
		s := startRaw(t, []string{"--config", cfg}, "--allow-host", fmt.Sprintf("127.0.0.1:%d", port))
		for i := 1; i <= calls; i++ {
			cmd := fmt.Sprintf(`curl -sS --noproxy "" -x "$HTTP_PROXY" http://127.0.0.1:%d/token-%d-%d; echo; echo pipe-%d-%d`, port, round, i, round, i)
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call",
				"params": map[string]any{"name": "bash", "arguments": map[string]any{"command": cmd, "timeout": 120}}})
			s.send(string(b))
		}
		bad := 0
		for range calls {
			r := s.reply()
			id, _ := r["id"].(float64)
			text := fmt.Sprint(r["result"])
			want := fmt.Sprintf("/token-%d-%d pipe-%d-%d exit code 0", round, int(id), round, int(id))
			if got := strings.Join(strings.Fields(contentText(asMap(r["result"]))), " "); got != want {
				bad++
				t.Errorf("round %d call %v: %q, want %q (%.300s)", round, r["id"], got, want, text)
			}
		}
		if bad > 0 {
			t.Fatalf("round %d: %d of %d calls did not get their own answer", round, bad, calls)
		}
	}
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
