package mcpserver

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestWatchHangup checks that the watcher calls hup when the writer of a
// pipe closes it, and gives up without calling it once done closes.
func TestWatchHangup(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	hup := make(chan struct{})
	go watchHangup(r, make(chan struct{}), func() { close(hup) })
	w.Close()
	select {
	case <-hup:
	case <-time.After(patience):
		t.Fatal("no hangup seen after the writer closed the pipe")
	}

	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	defer w2.Close()
	done := make(chan struct{})
	returned := make(chan struct{})
	called := false
	go func() {
		watchHangup(r2, done, func() { called = true })
		close(returned)
	}()
	close(done)
	select {
	case <-returned: // within a poll's second
	case <-time.After(patience):
		t.Fatal("the watcher did not give up once done closed")
	}
	if called {
		t.Error("hup was called while the writer holds the pipe open")
	}
}

// TestHangupUnread checks that a client that writes requests, never
// reads the answers and hangs up ends the server, although the SDK's
// writes block and hold the line reader back from the end of its input.
func TestHangupUnread(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, nil, inR, outW)
	t.Cleanup(func() { outR.Close() }) // after the check below: the answers were never read
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	// Far more answers than a pipe holds.
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`+"\n", i)
	}
	inW.Close()
	if ended, _ := ts.wait(); !ended {
		t.Fatal("the server did not end after its client hung up")
	}
}
