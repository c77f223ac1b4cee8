package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxMessage bounds one JSON-RPC line from the client.
const maxMessage = 16 << 20

// checkedStdio stands between the client and the SDK's stdio transport.
// The SDK ends the session at the first line it cannot decode, and with
// the session every shell this server started; so each line is decoded
// here first, and one that is not a single JSON-RPC message gets its error
// reply here and goes no further. Replies share the writer with the SDK's,
// a whole line at a time.
func checkedStdio(in io.Reader, out io.Writer) (io.ReadCloser, io.WriteCloser) {
	w := &lineWriter{w: out}
	pr, pw := io.Pipe()
	go func() {
		rd := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(rd)
			if len(bytes.TrimSpace(line)) > 0 {
				if reply := check(line); reply != nil {
					_, _ = w.Write(reply)
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return // the SDK closed its end
				}
			}
			if err != nil && !errors.Is(err, errLongLine) {
				pw.CloseWithError(err) // io.EOF ends the session cleanly
				return
			}
		}
	}()
	return pr, w
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
			return []byte("{"), errLongLine // decodes to a parse error
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// check returns the error reply for a line that is not one JSON-RPC
// message, or nil.
func check(line []byte) []byte {
	_, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return nil
	}
	code, msg := jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v", err)
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	switch t := bytes.TrimSpace(line); {
	case !json.Valid(t):
		code, msg = jsonrpc.CodeParseError, "parse error: each line must be one JSON-RPC message"
	case t[0] == '[':
		msg = "invalid request: batches are not supported; send one message a line"
	default:
		_ = json.Unmarshal(t, &probe)
	}
	id := json.RawMessage("null") // unless the line had a usable id
	var v any
	if json.Unmarshal(probe.ID, &v) == nil {
		switch v.(type) {
		case string, float64:
			id = probe.ID
		}
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	return append(b, '\n')
}

// lineWriter writes whole lines under a lock, so that the replies made
// here never split one of the SDK's.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lineWriter) Close() error {
	if c, ok := l.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
