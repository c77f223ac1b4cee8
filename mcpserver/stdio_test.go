package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for the checker's goroutine.
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

// TestCheckedStdio checks that only whole JSON-RPC messages reach the SDK,
// each request with an id of cshell's own, that a line past maxMessage
// or with anything but whitespace after its value is answered and passed
// over, and that the end of the input ends the SDK's stream.
func TestCheckedStdio(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	input := strings.Join([]string{
		good, "junk", "", `{"jsonrpc":"2.0"}`, "{" + strings.Repeat(" ", maxMessage) + "}",
		good + " \t",                                         // whitespace after the value: fine (and id 1 is in flight: refused as a duplicate)
		good + " x", good + "\x00", good + "\f", good + good, // anything else: a parse error
		`{"jsonrpc":"2.0","id":2,"method":"ping"}`,
	}, "\n")
	var out syncBuffer
	ended := make(chan struct{})
	r, _ := checkedStdio(strings.NewReader(input), &out, func() { close(ended) })
	passed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	<-ended
	want := `{"id":"cshell-1","jsonrpc":"2.0","method":"tools/list"}` + "\n" + `{"id":"cshell-2","jsonrpc":"2.0","method":"ping"}` + "\n"
	if string(passed) != want {
		t.Errorf("passed to the SDK: %.300q, want %q", passed, want)
	}
	var codes []int
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m struct {
			Error struct{ Code int }
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			t.Fatalf("reply %q is not JSON", l)
		}
		codes = append(codes, m.Error.Code)
	}
	wantCodes := []int{-32700, -32600, -32700, -32600, -32700, -32700, -32700, -32700}
	if fmt.Sprint(codes) != fmt.Sprint(wantCodes) {
		t.Errorf("reply codes %v, want %v:\n%s", codes, wantCodes, out.String())
	}
}

// The SDK's answers take the client's ids back, exactly as written; an
// id is free again once answered; error code 0 becomes JSON-RPC's.
func TestStdioIDs(t *testing.T) {
	pr, pw := io.Pipe()
	var out syncBuffer
	r, w := checkedStdio(pr, &out, nil)
	sdk := bufio.NewReader(r)
	ids := []string{`1.5`, `123456789012345678901234567890`, `"a\u00e9"`, `-0`, `1e3`}
	for _, id := range ids {
		fmt.Fprintf(pw, `{"jsonrpc":"2.0","id":%s,"method":"ping"}`+"\n", id)
		line, err := sdk.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		_ = json.Unmarshal(line, &m)
		// The SDK answers with the id it got; the second answer has code 0.
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":0,"message":"x"}}`+"\n", m["id"])
	}
	pw.Close()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != len(ids) {
		t.Fatalf("answers: %q", got)
	}
	for i, l := range got {
		var m map[string]json.RawMessage
		_ = json.Unmarshal([]byte(l), &m)
		if string(m["id"]) != ids[i] || !strings.Contains(string(m["error"]), `"code":-32600`) {
			t.Errorf("answer %q: id %s, want %s, and a JSON-RPC code", l, m["id"], ids[i])
		}
	}
}

// A cancellation names the request by the client's id: the SDK hears it
// by cshell's; one for no request in flight goes nowhere.
func TestStdioCancel(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"r"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nope"}}`,
	}, "\n")
	r, _ := checkedStdio(strings.NewReader(in), io.Discard, nil)
	passed, _ := io.ReadAll(r)
	lines := strings.Split(strings.TrimSpace(string(passed)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], `"requestId":"cshell-1"`) {
		t.Errorf("passed: %q", lines)
	}
}

// Past maxInFlight requests, one more is answered with an error at once.
func TestStdioBound(t *testing.T) {
	var b strings.Builder
	for i := range maxInFlight + 1 {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`+"\n", i)
	}
	var out syncBuffer
	r, _ := checkedStdio(strings.NewReader(b.String()), &out, nil)
	passed, _ := io.ReadAll(r)
	if n := strings.Count(string(passed), "\n"); n != maxInFlight {
		t.Errorf("%d requests passed, want %d", n, maxInFlight)
	}
	if !strings.Contains(out.String(), fmt.Sprintf(`"id":%d`, maxInFlight)) || !strings.Contains(out.String(), "as many as this server holds at once") {
		t.Errorf("the one too many: %q", out.String())
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"x"}`, `[]`, `{} {}`, `{"id":1.5}`, "\x00", `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		reply := check(b)
		if reply != nil && !json.Valid(bytes.TrimSpace(reply)) {
			t.Errorf("reply %q is not JSON", reply)
		}
	})
}

// TestStdioHeldBytes: the text of the held requests is bounded too, so
// that maxInFlight requests of nearly maxMessage each are not all held;
// an answer gives its bytes back.
func TestStdioHeldBytes(t *testing.T) {
	pad := strings.Repeat("x", 900<<10)
	var b strings.Builder
	n := maxHeldBytes/len(pad) + 2
	for i := range n {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tasks/result","params":{"taskId":"shell-1","pad":"%s"}}`+"\n", i, pad)
	}
	var out syncBuffer
	s := &stdio{inflight: map[string]held{}, byClient: map[string]string{}}
	s.out = &lineWriter{w: &out, rewrite: s.answer}
	passed := 0
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if s.judge([]byte(line)) != nil {
			passed++
		}
	}
	if want := maxHeldBytes / (len(pad) + 80); passed < want-1 || passed > want+1 || passed >= n {
		t.Errorf("%d of %d requests of 900 KiB held, want about %d", passed, n, want)
	}
	if !strings.Contains(out.String(), "as much as this server holds at once") || !strings.Contains(out.String(), `"code":-32000`) {
		t.Errorf("the request too heavy: %q", out.String())
	}
	// The first one's answer frees its bytes: one more is held.
	s.answer([]byte(`{"jsonrpc":"2.0","id":"cshell-1","result":{}}`))
	if s.judge([]byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"again","method":"tasks/result","params":{"pad":"%s"}}`, pad))) == nil {
		t.Error("an answered request's bytes were not given back")
	}
}

// TestStdioDuplicateIDShown: the duplicate id's error shows the client's
// id with its control and bidi characters made visible, cut.
func TestStdioDuplicateIDShown(t *testing.T) {
	var out syncBuffer
	s := &stdio{inflight: map[string]held{}, byClient: map[string]string{}}
	s.out = &lineWriter{w: &out, rewrite: s.answer}
	line := `{"jsonrpc":"2.0","id":"a\u202eb\u001b[31m` + strings.Repeat("z", 200) + `","method":"ping"}`
	if s.judge([]byte(line)) == nil || s.judge([]byte(line)) != nil {
		t.Fatal("the first should pass, the second be refused")
	}
	var reply struct {
		Error struct{ Message string }
	}
	if err := json.Unmarshal([]byte(out.String()), &reply); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if msg := reply.Error.Message; strings.ContainsAny(msg, "\u202e\x1b") || strings.Contains(msg, strings.Repeat("z", 100)) {
		t.Errorf("the duplicate id shown raw or whole: %q", msg)
	}
}
