package mcpserver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/shells"
)

// text is a result's text content.
func text(r *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, content := range r.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// unitServer is a server of the package's own making, without Serve: for
// what its pieces say.
func unitServer(t *testing.T, notify string) *server {
	t.Helper()
	m, err := shells.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &server{m: m, session: "unit", notify: notify, mine: map[string]string{}}
}

func TestNoticeText(t *testing.T) {
	s := unitServer(t, "wake")
	code := 2
	for _, tc := range []struct {
		n    shells.Notice
		want string
	}{
		{shells.Notice{ID: "3", Name: "web", Command: "npm run dev", StatusLine: "exited with 2 after 2s", ExitCode: &code,
			Signal: "TERM", RuntimeSeconds: 2, LastLines: []string{"one", "\x1b[31mtwo\x1b[0m\x07"}},
			`shell 3 "web" (npm run dev) exited with 2 after 2s; exit code 2, signal TERM, runtime 2.0s; last lines:` + "\none\ntwo\\x07"},
		{shells.Notice{ID: "4", Command: "a\nb", StatusLine: "lost", RuntimeSeconds: 0.25},
			`shell 4 (a\x0ab) lost; exit code ?, runtime 0.2s`},
		{shells.Notice{Event: "limit", ID: "5", Command: "make", Detail: "memory limit \x07hit"},
			`shell 5 (make): memory limit \x07hit`},
	} {
		if got := s.noticeText(tc.n); got != tc.want {
			t.Errorf("noticeText(%+v) =\n%q, want\n%q", tc.n, got, tc.want)
		}
	}
}

func TestNoticeResult(t *testing.T) {
	s := unitServer(t, "wake")
	zero, one := 0, 1
	for _, tc := range []struct {
		meta    shells.Meta
		isError bool
	}{
		{shells.Meta{ID: "1", Status: shells.StatusExited, ExitCode: &zero}, false},
		{shells.Meta{ID: "1", Status: shells.StatusExited, ExitCode: &one}, true},
		{shells.Meta{ID: "1", Status: shells.StatusLost}, true},
		{shells.Meta{ID: "1", Status: shells.StatusTimedOut, ExitCode: &zero}, true},
	} {
		tc.meta.Command, tc.meta.Name = "x\x1by", "n"
		r := s.noticeResult(shells.Notice{ID: "1", LastLines: []string{"\x1b[1m\x07line"}}, &tc.meta)
		end, ok := r.StructuredContent.(EndOfShell)
		if r.IsError != tc.isError || !ok || end.Command != `x\x1by` || end.Name != "n" || len(end.LastLines) != 1 || end.LastLines[0] != `\x07line` {
			t.Errorf("noticeResult(%s, %v): isError %v, %+v", tc.meta.Status, tc.meta.ExitCode, r.IsError, r.StructuredContent)
		}
	}
}

func TestDescribeShell(t *testing.T) {
	s := unitServer(t, "wake")
	meta := &shells.Meta{ID: "3", StatusLine: "running for 12s", Exposed: []shells.Exposed{{Listen: "127.0.0.1:5173", Port: 5173}, {Listen: "[::1]:80", Port: 80}}}
	if got, want := s.describeShell(meta), "shell 3: running for 12s; exposed 127.0.0.1:5173 -> 5173; exposed [::1]:80 -> 80"; got != want {
		t.Errorf("describeShell = %q, want %q", got, want)
	}
}

// TestResultPending checks that pending notices go with the next result
// only, in order.
func TestResultPending(t *testing.T) {
	s := unitServer(t, "wake")
	s.pending = []shells.Notice{{ID: "1", Command: "a", StatusLine: "exited with 0"}, {Event: "limit", ID: "2", Command: "b", Detail: "pids"}}
	if got := text(s.result("body")); got != "body\n[cshell notice] shell 1 (a) exited with 0; exit code ?, runtime 0.0s\n[cshell notice] shell 2 (b): pids" {
		t.Errorf("result with notices: %q", got)
	}
	if got := text(s.result("again")); got != "again" {
		t.Errorf("the next result: %q", got)
	}
}

func TestNoteOrNone(t *testing.T) {
	for notify, want := range map[string]string{"wake": byNote, "note": byNote, "none": byNone} {
		if got := unitServer(t, notify).noteOrNone(); got != want {
			t.Errorf("notify %s: %s, want %s", notify, got, want)
		}
	}
}

func TestToolError(t *testing.T) {
	r, data, err := toolError(errors.New("cwd \"\x1b]0;x\x07\": not inside"))
	if err != nil || data != nil || !r.IsError || text(r) != `cwd "\x1b]0;x\x07": not inside` {
		t.Errorf("toolError: %q, %v, %v, %v", text(r), r.IsError, data, err)
	}
}

// TestQuestion checks what the user is asked about a refused host: who,
// the command made visible, the host, and the three answers.
func TestQuestion(t *testing.T) {
	q := question("shell 4", "curl \x1b[2Jexample.org", "example.org:443")
	if q.Mode != "form" || q.Message != `shell 4 (curl \x1b[2Jexample.org) wants example.org:443, which it may not reach. Allow it once (for a minute), for this session, or deny?` {
		t.Errorf("question: %+v", q)
	}
	schema := q.RequestedSchema.(map[string]any)
	decision := schema["properties"].(map[string]any)["decision"].(map[string]any)
	if enum := decision["enum"].([]string); strings.Join(enum, ",") != "once,session,deny" || len(decision["enumNames"].([]string)) != 3 {
		t.Errorf("the answers: %v", decision)
	}
	if req := schema["required"].([]string); len(req) != 1 || req[0] != "decision" {
		t.Errorf("required: %v", req)
	}
}

// TestAnswer checks the grants each answer records: the session's for
// "session", the shell's for a while for "once", a refusal for anything
// else.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		res   *mcp.ElicitResult
		shell string
		deny  bool
		until bool
	}{
		{"session", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerSession}}, "", false, false},
		{"once", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerOnce}}, "7", false, true},
		{"deny", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerDeny}}, "7", true, true},
		{"declined", &mcp.ElicitResult{Action: "decline", Content: map[string]any{"decision": answerSession}}, "7", true, true},
		{"no decision", &mcp.ElicitResult{Action: "accept"}, "7", true, true},
		{"no answer", nil, "7", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := unitServer(t, "wake")
			before := time.Now()
			s.answer("7", "example.org:443", tc.res)
			gs := s.m.Grants("unit")
			if len(gs) != 1 {
				t.Fatalf("grants %+v, want one", gs)
			}
			g := gs[0]
			if g.Pattern != "example.org:443" || g.Shell != tc.shell || g.Deny != tc.deny || (g.Until != nil) != tc.until {
				t.Errorf("grant %+v", g)
			}
			if g.Until != nil && !g.Until.After(before.Add(onceFor-time.Second)) {
				t.Errorf("grant until %v, want about %v from now", g.Until, onceFor)
			}
		})
	}
}

func TestBracket(t *testing.T) {
	for in, want := range map[string]string{"example.org": "example.org", "10.0.0.1": "10.0.0.1", "::1": "[::1]", "fe80::1%eth0": "[fe80::1%eth0]"} {
		if got := bracket(in); got != want {
			t.Errorf("bracket(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCanAskIn(t *testing.T) {
	if canAskIn(nil) || canAskIn(&mcp.CallToolRequest{}) {
		t.Error("a call with no request or no params can be asked")
	}
}

// TestCanAskNoSession checks that a server with no session yet asks nobody.
func TestCanAskNoSession(t *testing.T) {
	if unitServer(t, "wake").canAsk() {
		t.Error("a server with no session can ask")
	}
}

// TestTailBuffer checks that the buffer keeps the last max bytes of
// every writer and counts what it dropped.
func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 10}
	for _, p := range []string{"0123", "456789ab", "", "cdefghijklmnop"} {
		if n, err := b.Write([]byte(p)); n != len(p) || err != nil {
			t.Errorf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if got := b.String(); got != "ghijklmnop" || b.cut != 16 {
		t.Errorf("kept %q, cut %d; want ghijklmnop, 16", got, b.cut)
	}
}

// TestFindByTaskID checks that shell-N reads as shell N, and that a
// name that only looks like a task id is looked up as a name.
func TestFindByTaskID(t *testing.T) {
	s := unitServer(t, "wake")
	for _, ref := range []string{"shell-12", "12", "shell-x", "", "nosuch"} {
		_, err := s.find(ref)
		if !errors.Is(err, shells.ErrNotFound) && ref != "" {
			t.Errorf("find(%q): %v, want not found", ref, err)
		}
		if err == nil {
			t.Errorf("find(%q) found a shell of an empty state dir", ref)
		}
		if ref == "shell-12" && !strings.Contains(err.Error(), " 12 among") {
			t.Errorf("find(shell-12): %v, want it read as 12", err)
		}
		if ref == "shell-x" && !strings.Contains(err.Error(), `named "shell-x"`) {
			t.Errorf("find(shell-x): %v, want a name", err)
		}
	}
}
