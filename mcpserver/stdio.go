package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/cshell/cshell/internal/escape"
)

// maxMessage bounds one JSON-RPC line from the client: a tool call's
// arguments need far less (a command is at most 128 KiB).
const maxMessage = 1 << 20

// hangupGrace is how long the line reader has, after the client hung
// up, to reach the end of its input, and the answers under way to go
// out, before the server ends regardless.
const hangupGrace = 2 * time.Second

// maxInFlight bounds the client's requests the server holds at once
// (answered or waiting: a tasks/result, a bash_output that waits, a
// foreground call); one past it is answered with an error at once.
const maxInFlight = 256

// maxHeldBytes bounds the text of the requests the server holds at once:
// the SDK keeps each held request's parameters whole, so 256 requests of
// almost maxMessage each would hold a quarter of a GiB. 4 MiB is room for
// 32 calls with the longest command the kernel runs (128 KiB), twice the
// default foreground slots; one past it is answered with an error at
// once, as one past maxInFlight.
const maxHeldBytes = 4 << 20

// stdio stands between the client and the SDK's stdio transport, and
// works around what the SDK would do with a buggy or hostile client:
//
//   - The SDK ends the session at the first line it cannot decode, and
//     with it every shell this server started: each line is judged here
//     first, by the rule the SDK's reader applies (one JSON value, JSON
//     whitespace around it), and one that is not a single JSON-RPC
//     message gets its error reply here and goes no further.
//   - The SDK keeps request ids as int64 or string (1.5 came back as 1, a
//     30-digit id as the smallest int64) and answered a request reusing
//     the id of one in flight with nothing: each request goes on with an
//     id of cshell's own, and its answer takes the client's id back, as
//     the client wrote it; a duplicate in flight is refused here.
//   - The requests the server holds are bounded (maxInFlight, and
//     maxHeldBytes of their text), and so is a line (maxMessage). When the client does not read, the writes
//     block, and so does the reading of new lines: nothing queues.
//
// Replies share the writer with the SDK's, a whole line at a time.
type stdio struct {
	out *lineWriter
	eof func() // stdin ended (or failed): the server ends at once

	mu       sync.Mutex
	inflight map[string]held   // cshell's id (as written) -> the client's request
	byClient map[string]string // the client's id (as written) -> cshell's
	bytes    int               // the text of the requests in flight
	next     uint64
}

// held is a request of the client's that waits for its answer.
type held struct {
	id   json.RawMessage // the client's, as written
	size int             // its line's length
}

// checkedStdio returns the reader and writer the SDK's transport is to
// use; eof is called when the client's side ends.
func checkedStdio(in io.Reader, out io.Writer, eof func()) (io.ReadCloser, io.WriteCloser) {
	s := &stdio{eof: eof, inflight: map[string]held{}, byClient: map[string]string{}}
	s.out = &lineWriter{w: out, rewrite: s.answer, broken: eof}
	pr, pw := io.Pipe()
	read := make(chan struct{})
	var ending sync.Once
	end := func(err error) {
		// The answers under way get a moment to go out (a script that
		// writes its requests and closes stdin reads them), no more; the
		// SDK drops them once its input ends.
		ending.Do(func() {
			for deadline := time.Now().Add(hangupGrace); time.Now().Before(deadline) && s.held() > 0; {
				time.Sleep(20 * time.Millisecond)
			}
			pw.CloseWithError(err) // io.EOF ends the session cleanly
			if eof != nil {
				eof()
			}
		})
	}
	if f, ok := in.(*os.File); ok {
		// A client that closed its end while its answers wait unread holds
		// the line reader back from its end of input: the hangup itself
		// ends the server, once the reader had a moment to get there.
		go watchHangup(f, read, func() {
			select {
			case <-read:
			case <-time.After(hangupGrace):
				end(io.EOF)
			}
		})
	}
	go func() {
		defer close(read)
		rd := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(rd)
			if msg := s.judge(line); msg != nil {
				if _, werr := pw.Write(append(msg, '\n')); werr != nil {
					return // the SDK closed its end
				}
			}
			if err != nil && !errors.Is(err, errLongLine) {
				end(err)
				return
			}
		}
	}()
	return pr, s.out
}

var errLongLine = errors.New("line too long")

// readLine returns the next line without its newline; a line past
// maxMessage is read to its end and returned cut, with errLongLine.
func readLine(rd *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := rd.ReadSlice('\n')
		if len(line)+len(part) <= maxMessage {
			line = append(line, part...)
		} else { // read to the end of it, holding nothing more
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = rd.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			return []byte("{"), errLongLine // judged a parse error
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// jsonSpace is what JSON allows around a value.
const jsonSpace = " \t\r\n"

// judge returns what the SDK is to read of a line (nil: nothing), having
// answered itself a line that is not one JSON-RPC message, a duplicate
// id, or one request too many.
func (s *stdio) judge(line []byte) []byte {
	v := bytes.Trim(line, jsonSpace)
	if len(v) == 0 {
		return nil
	}
	if reply := check(v); reply != nil {
		s.out.reply(reply)
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(v, &m) != nil {
		return v // a message of another shape the SDK judges itself
	}
	id, isCall := m["id"]
	_, hasMethod := m["method"]
	switch {
	case hasMethod && isCall:
		key := string(compact(id))
		s.mu.Lock()
		_, dup := s.byClient[key]
		full := len(s.inflight) >= maxInFlight
		heavy := s.bytes+len(v) > maxHeldBytes
		var own string
		if !dup && !full && !heavy {
			s.next++
			own = strconv.Quote("cshell-" + strconv.FormatUint(s.next, 10))
			s.inflight[own] = held{id: id, size: len(v)}
			s.byClient[key] = own
			s.bytes += len(v)
		}
		s.mu.Unlock()
		switch {
		case dup:
			// The id is the client's text: shown cut, its controls visible.
			shown := escape.Line(key)
			if len(shown) > 80 {
				shown = shown[:80] + "…"
			}
			s.out.reply(errorReply(id, int(jsonrpc.CodeInvalidRequest), fmt.Sprintf("invalid request: a request with id %s is still being answered; give each request an id of its own", shown)))
			return nil
		case full:
			s.out.reply(errorReply(id, -32000, fmt.Sprintf("%d requests are being answered, as many as this server holds at once; wait for their answers (or cancel some) before sending more", maxInFlight)))
			return nil
		case heavy:
			s.out.reply(errorReply(id, -32000, fmt.Sprintf("the requests being answered hold %d MiB, as much as this server holds at once; wait for their answers (or cancel some) before sending more", maxHeldBytes>>20)))
			return nil
		}
		m["id"] = json.RawMessage(own)
	case hasMethod && string(m["method"]) == `"notifications/cancelled"`:
		// It names the request by the client's id: give the SDK ours.
		var p map[string]json.RawMessage
		if json.Unmarshal(m["params"], &p) == nil {
			s.mu.Lock()
			own, ok := s.byClient[string(compact(p["requestId"]))]
			s.mu.Unlock()
			if !ok {
				return nil // not one in flight: nothing to cancel
			}
			p["requestId"] = json.RawMessage(own)
			m["params"], _ = json.Marshal(p)
		}
	default:
		return v // an answer to a request of the server's: ids of its own
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return b
}

// answer gives an answer of the SDK's the client's id back, and the
// error codes JSON-RPC has (the SDK answers some with code 0).
func (s *stdio) answer(line []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return line
	}
	id, ok := m["id"]
	if !ok {
		return line // a notification
	}
	if _, isRequest := m["method"]; isRequest {
		return line // a request of the server's own
	}
	s.mu.Lock()
	h, mine := s.inflight[string(id)]
	if mine {
		delete(s.inflight, string(id))
		delete(s.byClient, string(compact(h.id)))
		s.bytes -= h.size
	}
	s.mu.Unlock()
	if !mine {
		return line
	}
	m["id"] = h.id
	if e, ok := m["error"]; ok {
		var obj map[string]json.RawMessage
		if json.Unmarshal(e, &obj) == nil && (string(obj["code"]) == "0" || obj["code"] == nil) {
			obj["code"] = json.RawMessage(strconv.Itoa(int(jsonrpc.CodeInvalidRequest)))
			m["error"], _ = json.Marshal(obj)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return line
	}
	return b
}

// held is how many of the client's requests wait for their answer.
func (s *stdio) held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}

// compact writes a JSON value without the spaces it was written with
// (ids compare as values: "1" and " 1" are the same id).
func compact(v json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return v
	}
	return b.Bytes()
}

// check returns the error reply for a value that is not one JSON-RPC
// message, or nil: one JSON value and nothing after it (the SDK's reader
// ends the session on anything more), which decodes as a message.
func check(v []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(v))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil || len(bytes.Trim(v[dec.InputOffset():], jsonSpace)) > 0 {
		return errorReply(json.RawMessage("null"), int(jsonrpc.CodeParseError), "parse error: each line must be one JSON-RPC message, and nothing else")
	}
	if _, err := jsonrpc.DecodeMessage(v); err == nil {
		return nil
	} else if v[0] == '[' {
		return errorReply(json.RawMessage("null"), int(jsonrpc.CodeInvalidRequest), "invalid request: batches are not supported; send one message a line")
	} else {
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(v, &probe)
		id := json.RawMessage("null") // unless the line had a usable id
		var x any
		if json.Unmarshal(probe.ID, &x) == nil {
			switch x.(type) {
			case string, float64:
				id = probe.ID
			}
		}
		return errorReply(id, int(jsonrpc.CodeInvalidRequest), fmt.Sprintf("invalid request: %v", err))
	}
}

func errorReply(id json.RawMessage, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}

// lineWriter writes whole lines under a lock, so that the replies made
// here never split one of the SDK's; each of the SDK's lines goes
// through rewrite first.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	buf     []byte
	rewrite func([]byte) []byte
	// broken is called when a write fails: the client closed its end, and
	// the server ends as cleanly as when its input ends.
	broken func()
}

// Write takes the SDK's output, a line at a time.
func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.buf[:i]
		if l.rewrite != nil {
			line = l.rewrite(line)
		}
		_, err := l.w.Write(append(append([]byte(nil), line...), '\n'))
		l.buf = l.buf[i+1:]
		if len(l.buf) == 0 {
			l.buf = nil
		}
		if err != nil {
			if l.broken != nil {
				l.broken()
			}
			return len(p), err
		}
	}
}

// reply writes a reply of the line checker's own.
func (l *lineWriter) reply(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(b)
}

func (l *lineWriter) Close() error {
	if c, ok := l.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
