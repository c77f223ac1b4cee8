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
	return startRawAs(t, `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}`, globals, serveArgs...)
}

// startRawAs starts serve for a client whose initialize params are init.
func startRawAs(t *testing.T, init string, globals []string, serveArgs ...string) *rawServe {
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
			// stdin's end must end the server at once: a hang is a fault.
			t.Errorf("the server did not end within 20 s of stdin's end")
			_ = s.cmd.Process.Kill()
			<-done
		}
		waitSupervisors(t, s.state)
	})
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":` + init + `}`)
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

// answerTo reads the server's lines until the answer to request id,
// passing over notifications and other answers.
func (s *rawServe) answerTo(id string) map[string]any {
	s.t.Helper()
	for {
		if m := s.reply(); fmt.Sprint(m["id"]) == id {
			return m
		}
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

// No line a client writes ends the server: trailing bytes after a value
// are a parse error for that line (whitespace is fine); the background
// shell the session started runs on.
func TestServeTrailingBytes(t *testing.T) {
	requireLinux(t)
	s := startRaw(t, nil)
	marker := fmt.Sprintf("%d", 530000+os.Getpid()%10000)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep ` + marker + `","run_in_background":true}}}`)
	if r := s.reply(); r["error"] != nil {
		t.Fatalf("bash: %v", r)
	}
	ping := `{"jsonrpc":"2.0","id":%d,"method":"ping"}`
	for i, tail := range []string{" ", "\t", " \t \r", "\x00", "\f", "x", fmt.Sprintf(ping, 99), " {}"} {
		s.send(fmt.Sprintf(ping, 10+i) + tail)
		r := s.reply()
		ws := strings.Trim(tail, " \t\r") == ""
		if ws && (r["id"] != float64(10+i) || r["result"] == nil) {
			t.Errorf("ping with %q after it: %v, want its answer", tail, r)
		}
		if e, _ := r["error"].(map[string]any); !ws && (e == nil || e["code"] != -32700.0) {
			t.Errorf("ping with %q after it: %v, want a parse error", tail, r)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_shells","arguments":{}}}`)
	if r := s.reply(); !strings.Contains(fmt.Sprint(r["result"]), "running") {
		t.Errorf("the shell after the bad lines: %v", r)
	}
	if len(hostProcesses("sleep "+marker)) != 1 {
		t.Errorf("the background shell did not survive the bad lines")
	}
}

// Answers carry the request's id as the client wrote it; an id in flight
// is refused for a second request; errors have JSON-RPC's codes; another
// session's shell answers as a shell that never was.
func TestServeIDsAndCodes(t *testing.T) {
	requireLinux(t)
	// Before initialize, and a second initialize: JSON-RPC codes.
	cmd := exec.Command(cshellBin, "--state-dir", t.TempDir(), "serve")
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
	}, "\n") + "\n")
	out, _ := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"code":-32600`) || !strings.Contains(lines[2], `"code":-32600`) {
		t.Errorf("before and after initialize: %q", lines)
	}

	s := startRaw(t, nil)
	for _, id := range []string{`1.5`, `123456789012345678901234567890`, `"x\u00e9"`, `1e3`} {
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		line, err := s.out.ReadBytes('\n')
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(line, &m) != nil || string(m["id"]) != id {
			t.Errorf("id %s came back as %s (%q)", id, m["id"], line)
		}
	}
	// A foreground call in flight, and a second request with its id.
	s.send(`{"jsonrpc":"2.0","id":"same","method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1; echo first"}}}`)
	s.send(`{"jsonrpc":"2.0","id":"same","method":"ping"}`)
	r := s.reply()
	if e, _ := r["error"].(map[string]any); e == nil || e["code"] != -32600.0 || !strings.Contains(fmt.Sprint(e["message"]), "still being answered") {
		t.Errorf("a duplicate id in flight: %v", r)
	}
	if r := s.reply(); r["id"] != "same" || !strings.Contains(fmt.Sprint(r["result"]), "first") {
		t.Errorf("the first request's answer: %v", r)
	}
	// Another session's shell, and one that never was: the same words.
	other := newBG(t)
	oid := other.start("sleep 30")
	_ = oid
	texts := map[string]string{}
	for _, ref := range []string{oid, "9999"} {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "o" + ref, "method": "tools/call",
			"params": map[string]any{"name": "bash_output", "arguments": map[string]any{"bash_id": ref}}})
		s.send(string(b))
		texts[ref] = strings.ReplaceAll(contentText(asMap(s.reply()["result"])), ref, "N")
	}
	if texts[oid] != texts["9999"] || !strings.Contains(texts[oid], "no such shell") {
		t.Errorf("another session's shell answers %q, a shell that never was %q", texts[oid], texts["9999"])
	}
	// A name that reads as a task id is refused.
	s.send(`{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"bash","arguments":{"command":"true","run_in_background":true,"name":"shell-7"}}}`)
	if r := s.reply(); !strings.Contains(fmt.Sprint(r["result"]), "shell-N or call-N") {
		t.Errorf("a name of the form shell-N: %v", r)
	}
}

// What a shell prints and what a client sends comes back made visible,
// in structured content and error texts as in text: no ESC, BEL, OSC, C1
// or bidirectional control.
func TestServeEscapesVisible(t *testing.T) {
	requireLinux(t)
	s := startRaw(t, nil)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"printf '\\033]52;c;Y2xpcA==\\007 \\033[31mred \\342\\200\\256evil\\n'; sleep 30","run_in_background":true,"name":"esc"}}}`)
	s.reply()
	time.Sleep(500 * time.Millisecond)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash_output","arguments":{"bash_id":"esc"}}}`)
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Result struct {
			StructuredContent struct{ Output string }
			Content           []struct{ Text string }
		}
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"structured": m.Result.StructuredContent.Output, "text": m.Result.Content[0].Text} {
		// The terminal's sequences are taken out (the clipboard write
		// too); a direction change is shown.
		if strings.ContainsAny(text, "\x1b\x07\u202e\u009b") || strings.Contains(text, "52;c") || !strings.Contains(text, ` red \u202eevil`) {
			t.Errorf("%s output: %q", what, text)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true","cwd":"/nope\u001b[2J\u0007\u202e\u0000\u0085"}}}`)
	if r := s.reply(); strings.ContainsAny(fmt.Sprint(r), "\x1b\x07\u202e\x00\u0085") || asMap(r["result"])["isError"] != true {
		t.Errorf("a bad cwd echoed raw: %q", fmt.Sprint(r))
	}
}

// A flood of waiting requests and a client that never reads leave the
// server's memory bounded (shells.maxInFlight, a line of at most 1 MiB,
// no reading while answers cannot be written), and the end of stdin
// still ends everything at once.
func TestServeFloodsBounded(t *testing.T) {
	requireLinux(t)
	cmd := exec.Command(cshellBin, "--state-dir", t.TempDir(), "serve")
	cmd.Dir = t.TempDir()
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	out := bufio.NewReader(outPipe)
	write := func(line string) error {
		_, err := io.WriteString(in, line+"\n")
		return err
	}
	read := func() string {
		l, _ := out.ReadString('\n')
		return l
	}
	_ = write(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"e2e","version":"1"}}}`)
	read()
	_ = write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	marker := fmt.Sprintf("%d", 540000+os.Getpid()%10000)
	_ = write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep ` + marker + `","run_in_background":true},"task":{"ttl":60000}}}`)
	if r := read(); !strings.Contains(r, `"taskId":"shell-1"`) {
		t.Fatalf("the task: %s", r)
	}
	pid := cmd.Process.Pid
	before := rssKiB(pid)
	// 20,000 waiting requests on the running task, and 25 lines of 8 MB:
	// the server holds maxInFlight of the first, none of the second.
	big := `{"jsonrpc":"2.0","id":"big","method":"tasks/result","params":{"taskId":"shell-1","x":"` + strings.Repeat("x", 8<<20) + `"}}`
	// First 30 held requests of 900 KiB each: the server holds 4 MiB of
	// them and refuses the rest.
	heavy := `","method":"tasks/result","params":{"taskId":"shell-1","pad":"` + strings.Repeat("y", 900<<10) + `"}}`
	for i := 0; i < 30; i++ {
		_ = write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"heavy%d`, i) + heavy)
	}
	_ = write(`{"jsonrpc":"2.0","id":"after-heavy","method":"ping"}`)
	tooHeavy := 0
	for {
		l := read()
		if l == "" {
			t.Fatal("the server ended")
		}
		if strings.Contains(l, `"code":-32000`) && strings.Contains(l, "MiB, as much as this server holds at once") {
			tooHeavy++
		}
		if strings.Contains(l, `"id":"after-heavy"`) {
			break
		}
	}
	if tooHeavy < 22 || tooHeavy > 28 {
		t.Errorf("%d of 30 requests of 900 KiB refused past 4 MiB, want about 26", tooHeavy)
	}
	go func() {
		for i := 0; i < 20000; i++ {
			if write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"shell-1"}}`, 100+i)) != nil {
				return
			}
			if i%800 == 0 {
				_ = write(big)
			}
		}
	}()
	// Read the answers for a while (errors past the bound, parse errors
	// for the long lines), then stop reading: the client that never reads.
	refused, parseErrors := 0, 0
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && refused+parseErrors < 19000; {
		l := read()
		if strings.Contains(l, `"code":-32000`) {
			refused++
		}
		if strings.Contains(l, `"code":-32700`) {
			parseErrors++
		}
	}
	if refused < 19000-256 || parseErrors < 1 {
		t.Errorf("%d requests refused past the bound and %d long lines, want nearly 20,000 and the long ones", refused, parseErrors)
	}
	go func() {
		for i := 0; ; i++ {
			if write(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"ping"}`, i)) != nil {
				return
			}
		}
	}()
	time.Sleep(5 * time.Second)
	after := rssKiB(pid)
	t.Logf("the floods took the server from %d to %d KiB", before, after)
	if after-before > 100<<10 {
		t.Errorf("the floods took the server from %d to %d KiB", before, after)
	}
	// stdin's end ends the server and its shells at once, answers unread.
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Errorf("the server did not end within 5 s of stdin's end (its answers unread)")
	}
	waitGone(t, "sleep "+marker, 15*time.Second)
}

// Foreground calls past shells.maxForegroundCalls wait for a turn (never
// more run at once), and past 128 waiting one is refused at once with a
// sentence; the server answers meanwhile, and stdin's end ends them all.
func TestServeForegroundTurns(t *testing.T) {
	requireLinux(t)
	marker := fmt.Sprintf("%d", 560000+os.Getpid()%10000)
	call := func(id, command string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"bash","arguments":{"command":%q}}}`, id, command)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	writeFile(t, cfg, `{"shells": {"maxForegroundCalls": 2}}`)
	s := startRaw(t, []string{"--config", cfg})
	held := "sleep 2." + marker // a unique command line: the marker
	for i := 1; i <= 3; i++ {
		s.send(call(fmt.Sprintf("fg%d", i), fmt.Sprintf("%s; echo done-%d", held, i)))
	}
	// Until the first answer, never more than two run.
	most := 0
	answers := make(chan map[string]any, 3)
	go func() {
		for range 3 {
			answers <- s.reply()
		}
	}()
	var got []map[string]any
	for len(got) < 3 {
		select {
		case a := <-answers:
			got = append(got, a)
		case <-time.After(20 * time.Millisecond):
		}
		if len(got) == 0 {
			most = max(most, len(hostProcesses("sleep 2."+marker)))
		}
	}
	if most != 2 {
		t.Errorf("%d foreground calls ran at once, want the 2 of shells.maxForegroundCalls", most)
	}
	for _, a := range got {
		if text := fmt.Sprint(a["result"]); !strings.Contains(text, "done-") || !strings.Contains(text, "exit code 0") {
			t.Errorf("a call that waited its turn: %v", a)
		}
	}

	// One slot held; 128 wait; the 130th is refused at once.
	writeFile(t, cfg, `{"shells": {"maxForegroundCalls": 1}}`)
	s = startRaw(t, []string{"--config", cfg})
	s.send(call("hold", "sleep 30."+marker))
	waitCount(t, "sleep 30."+marker, 1, 30*time.Second)
	for i := 0; i < 129; i++ {
		s.send(call(fmt.Sprintf("w%d", i), "true"))
	}
	s.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	refused, pinged := "", false
	for !pinged || refused == "" {
		a := s.reply()
		switch {
		case a["id"] == "ping":
			pinged = true
		case a["result"] != nil && strings.Contains(fmt.Sprint(a["result"]), "wait for a turn, the most that may"):
			refused = fmt.Sprint(a["id"])
		default:
			t.Fatalf("an answer before the held call ended: %v", a)
		}
	}
	if !strings.HasPrefix(refused, "w") {
		t.Errorf("refused %s", refused)
	}
	// stdin's end ends the running call and the waiting ones at once.
	s.in.Close()
	waitGone(t, marker, 10*time.Second)
}

// A task is kept for the time-to-live its client asked (2025-11-25's
// task.ttl), at most the server's hour: past it, tasks/list no longer
// shows it and tasks/get finds nothing; one asked for longer is kept.
func TestServeTaskTTL(t *testing.T) {
	requireLinux(t)
	s := startRawAs(t, `{"protocolVersion":"2025-11-25","capabilities":{"tasks":{}},"clientInfo":{"name":"e2e","version":"1"}}`, nil)
	start := func(id, command string, ttl int) (string, float64) {
		t.Helper()
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"bash","arguments":{"command":%q},"task":{"ttl":%d}}}`, id, command, ttl))
		r := s.answerTo(id)
		task, _ := r["result"].(map[string]any)["task"].(map[string]any)
		if task == nil {
			t.Fatalf("no task: %v", r)
		}
		return fmt.Sprint(task["taskId"]), task["ttl"].(float64)
	}
	// The short ttl leaves room for a slow start (race builds, a loaded
	// machine) before the list that must still show it.
	const shortTTL = 4 * time.Second
	shortMade := time.Now()
	short, ttl := start("short", "echo ttl-short", int(shortTTL.Milliseconds()))
	if ttl != float64(shortTTL.Milliseconds()) {
		t.Errorf("the task's ttl %v, want the %d asked", ttl, shortTTL.Milliseconds())
	}
	long, ttl := start("long", "echo ttl-long", 10*3600*1000)
	if ttl != 3600*1000 {
		t.Errorf("a ttl of ten hours became %v, want the server's most, an hour", ttl)
	}
	for _, id := range []string{short, long} {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r-%s","method":"tasks/result","params":{"taskId":%q}}`, id, id))
		if r := s.answerTo("r-" + id); !strings.Contains(fmt.Sprint(r["result"]), "ttl-") {
			t.Errorf("the result of %s: %v", id, r)
		}
	}
	listed := func() string {
		s.send(`{"jsonrpc":"2.0","id":"list","method":"tasks/list"}`)
		return fmt.Sprint(s.answerTo("list")["result"])
	}
	if l := listed(); !strings.Contains(l, short) || !strings.Contains(l, long) {
		t.Fatalf("tasks/list before their time (%v after the short one): %s", time.Since(shortMade), l)
	}
	time.Sleep(time.Until(shortMade.Add(shortTTL + 500*time.Millisecond)))
	if l := listed(); strings.Contains(l, "taskId:"+short+" ") || !strings.Contains(l, long) {
		t.Errorf("tasks/list past the short task's ttl: %s", l)
	}
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"get","method":"tasks/get","params":{"taskId":%q}}`, short))
	if r := s.answerTo("get"); r["error"] == nil {
		t.Errorf("tasks/get of a task past its ttl: %v", r)
	}
}
