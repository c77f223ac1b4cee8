package mcpserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestCheck checks the reply to each kind of line that is no single
// JSON-RPC message: its code, and the id it carries (the line's, when
// the line had one that can be answered).
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		line string
		code int    // 0: no reply, the line goes on
		id   string // the reply's id
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}   `, 0, ""},
		{`nope`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}{}`, -32700, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, -32600, "null"},
		{`[]`, -32600, "null"},
		{`"just a string"`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":"s","method":3}`, -32600, `"s"`},
		{`{"jsonrpc":"2.0","id":2.5,"method":3}`, -32600, "2.5"},
		{`{"jsonrpc":"2.0","id":[1],"method":"x"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"x"}`, -32600, "null"},
	} {
		reply := check([]byte(tc.line))
		if tc.code == 0 {
			if reply != nil {
				t.Errorf("check(%s) = %s, want no reply", tc.line, reply)
			}
			continue
		}
		var m struct {
			ID    json.RawMessage
			Error struct {
				Code    int
				Message string
			}
		}
		if err := json.Unmarshal(reply, &m); err != nil {
			t.Errorf("check(%s) = %q: %v", tc.line, reply, err)
			continue
		}
		if m.Error.Code != tc.code || string(m.ID) != tc.id || m.Error.Message == "" {
			t.Errorf("check(%s) = %s, want code %d and id %s", tc.line, reply, tc.code, tc.id)
		}
	}
}

// TestReadLine checks lines at and past maxMessage, across the reader's
// buffer, and the last line without its newline.
func TestReadLine(t *testing.T) {
	atMax := strings.Repeat("a", maxMessage-1) // with its newline: maxMessage
	in := atMax + "\n" + strings.Repeat("b", maxMessage+10) + "\nshort\nlast"
	rd := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
	for i, want := range []struct {
		line string
		err  error
	}{{atMax, nil}, {"{", errLongLine}, {"short", nil}, {"last", io.EOF}} {
		line, err := readLine(rd)
		if string(line) != want.line || !errors.Is(err, want.err) && err != want.err {
			t.Errorf("line %d: %.20q (%d bytes), %v; want %.20q, %v", i, line, len(line), err, want.line, want.err)
		}
	}
	// A long line cut short by the end of input is the end, not a line.
	rd = bufio.NewReaderSize(strings.NewReader(strings.Repeat("c", maxMessage+1)), 64<<10)
	if line, err := readLine(rd); line != nil || err != io.EOF {
		t.Errorf("an endless line: %d bytes, %v; want nothing, EOF", len(line), err)
	}
}

// TestStdioAnswer checks what the answers of the SDK become: its own
// ids turned back into the client's, code 0 made JSON-RPC's, and
// everything else (notifications, requests of the server's, ids of no
// client request, lines that are not JSON) written as it was.
func TestStdioAnswer(t *testing.T) {
	s := &stdio{inflight: map[string]held{`"cshell-1"`: {id: json.RawMessage(`"mine"`)}},
		byClient: map[string]string{`"mine"`: `"cshell-1"`}}
	for _, line := range []string{
		`not json`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		`{"jsonrpc":"2.0","id":"cshell-1","method":"elicitation/create","params":{}}`,
		`{"jsonrpc":"2.0","id":"cshell-9","result":{}}`,
	} {
		if got := s.answer([]byte(line)); string(got) != line {
			t.Errorf("answer(%s) = %s, want it unchanged", line, got)
		}
	}
	got := s.answer([]byte(`{"jsonrpc":"2.0","id":"cshell-1","error":{"message":"no code"}}`))
	if want := `{"error":{"code":-32600,"message":"no code"},"id":"mine","jsonrpc":"2.0"}`; string(got) != want {
		t.Errorf("an error without a code: %s, want %s", got, want)
	}
	if s.held() != 0 || len(s.byClient) != 0 {
		t.Errorf("after the answer: %d held, %v", s.held(), s.byClient)
	}
	// Answered once: a second answer of that id is no client's.
	line := `{"jsonrpc":"2.0","id":"cshell-1","result":{}}`
	if got := s.answer([]byte(line)); string(got) != line {
		t.Errorf("a second answer: %s", got)
	}
}

// TestJudge checks what goes on to the SDK: answers to the server's own
// requests and other notifications unchanged, requests with ids of
// cshell's own, and nothing for an empty line.
func TestJudge(t *testing.T) {
	var out syncBuffer
	s := &stdio{inflight: map[string]held{}, byClient: map[string]string{}}
	s.out = &lineWriter{w: &out}
	for _, tc := range []struct{ line, want string }{
		{"  \t\r", ""},
		{`{"jsonrpc":"2.0","id":"cshell-1","result":{"action":"accept"}}`, `{"jsonrpc":"2.0","id":"cshell-1","result":{"action":"accept"}}`},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{` {"jsonrpc":"2.0", "id": 1 ,"method":"ping"} `, `{"id":"cshell-1","jsonrpc":"2.0","method":"ping"}`},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId": 1}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"cshell-1"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, ""}, // id 1 is in flight
	} {
		if got := string(s.judge([]byte(tc.line))); got != tc.want {
			t.Errorf("judge(%s) = %s, want %s", tc.line, got, tc.want)
		}
	}
	if !strings.Contains(out.String(), `"id":1`) || !strings.Contains(out.String(), "still being answered") {
		t.Errorf("replies: %s", out.String())
	}
}

// failingWriter fails every write.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("broken pipe")
}

// TestLineWriter checks that the SDK's output goes out a whole line at a
// time, each through rewrite, that a write error is the caller's, and
// that Close closes what can be closed.
func TestLineWriter(t *testing.T) {
	var out syncBuffer
	l := &lineWriter{w: &out, rewrite: func(b []byte) []byte { return []byte(strings.ToUpper(string(b))) }}
	for _, p := range []string{"ab", "c\nd", "e\n\nf"} {
		if n, err := l.Write([]byte(p)); n != len(p) || err != nil {
			t.Errorf("Write(%q) = %d, %v", p, n, err)
		}
	}
	l.reply([]byte("reply\n"))
	if got := out.String(); got != "ABC\nDE\n\nreply\n" {
		t.Errorf("written %q", got)
	}
	if l.Close() != nil {
		t.Error("Close of a writer that cannot be closed")
	}
	f := &failingWriter{}
	l = &lineWriter{w: f}
	if _, err := l.Write([]byte("x\ny\n")); err == nil || f.n != 1 {
		t.Errorf("a failing write: %v after %d writes", err, f.n)
	}
	pr, pw := io.Pipe()
	l = &lineWriter{w: pw}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after Close: %v, want EOF", err)
	}
}

// TestCompact checks that ids compare as values.
func TestCompact(t *testing.T) {
	for in, want := range map[string]string{` 1 `: `1`, `{ "a" : 1 }`: `{"a":1}`, `"a b"`: `"a b"`, `{bad`: `{bad`} {
		if got := string(compact(json.RawMessage(in))); got != want {
			t.Errorf("compact(%q) = %q, want %q", in, got, want)
		}
	}
}
