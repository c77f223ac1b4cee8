//go:build unix

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/container"
	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/policy"
	"github.com/cshell/cshell/shells"
)

// askServer is a server of the package's own making with a session of
// the SDK's, whose client answers elicitations with elicit; it runs
// commands as Serve's would, in a directory of its own.
func askServer(t *testing.T, elicit func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) (*server, string) {
	t.Helper()
	s := unitServer(t, "wake")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	dir, home := resolvedTemp(t), resolvedTemp(t)
	s.ctx, s.runs, s.slots, s.asking = ctx, map[string]*fgRun{}, make(chan struct{}, 1), map[string]bool{}
	s.o.Run = shells.RunOptions{Request: plan.Request{Isolation: container.Process, Session: s.session,
		FS: policy.FilesystemRequest{Home: home, Cwd: dir}}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: elicit})
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Close() })
	s.mcp = ss
	return s, dir
}

// TestAsk checks that a background shell's refused host is put to the
// user once at a time, and that the answer becomes a grant.
func TestAsk(t *testing.T) {
	entered, release := make(chan string, 4), make(chan struct{})
	var calls atomic.Int32
	s, _ := askServer(t, func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		calls.Add(1)
		entered <- r.Params.Message
		<-release
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerSession}}, nil
	})
	if !s.canAsk() {
		t.Fatal("a client with elicitation cannot be asked")
	}
	n := shells.Notice{ID: "3", Command: "curl example.org", Host: "example.org", Port: 443}
	done := make(chan struct{})
	go func() { s.ask(context.Background(), n, false); close(done) }()
	if msg := <-entered; !strings.HasPrefix(msg, "shell 3 (curl example.org) wants example.org:443, which it may not reach.") {
		t.Errorf("the question: %q", msg)
	}
	s.ask(context.Background(), n, false) // the same host while it is asked: no second question
	close(release)
	<-done
	if calls.Load() != 1 {
		t.Errorf("asked %d times, want once", calls.Load())
	}
	if gs := s.m.Grants(s.session); len(gs) != 1 || gs[0].Pattern != "example.org:443" || gs[0].Shell != "" || gs[0].Deny {
		t.Errorf("grants after allow for the session: %+v", gs)
	}
	if len(s.asking) != 0 {
		t.Errorf("still asking about %v", s.asking)
	}
}

// TestAskUnanswered checks that a question the client fails to answer
// records nothing (the held request's wait ends by itself).
func TestAskUnanswered(t *testing.T) {
	s, _ := askServer(t, func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return nil, errors.New("no user here")
	})
	s.ask(context.Background(), shells.Notice{ID: "3", Host: "::1", Port: 80}, false)
	if gs := s.m.Grants(""); len(gs) != 0 {
		t.Errorf("grants after no answer: %+v", gs)
	}
}

// TestForegroundAsks checks a foreground call's round trips: a refused
// host ends the call with a question (an input request and the run's
// state) while the command runs on; the same host is asked once; the
// next call, with the answer, records it and takes up the same run to
// its end.
func TestForegroundAsks(t *testing.T) {
	s, dir := askServer(t, nil)
	ts := &testServer{t: t, dir: dir}
	o := s.o.Run
	o.Command = []string{"echo $$ > fg.pid; " + gate("go") + "; echo resumed"}
	run := s.startRun(o)
	pid := ts.pidFile("fg.pid")
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "bash"}}

	run.asking <- "example.org:443"
	r := s.await(context.Background(), req, run)
	q, ok := r.InputRequests["net-1"].(*mcp.ElicitParams)
	if !ok || r.RequestState != run.id || !strings.Contains(q.Message, "a foreground command (echo $$ > fg.pid;") ||
		!strings.Contains(q.Message, "wants example.org:443") {
		t.Fatalf("the question: %+v", r)
	}
	if !alive(pid) {
		t.Errorf("the command stopped while the user is asked")
	}

	// The answer comes with the next call; the same host again is not
	// asked twice, and the run goes on to its end.
	run.asking <- "example.org:443"
	next := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "bash", RequestState: run.id,
		InputResponses: mcp.InputResponseMap{
			"net-1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerOnce}},
			"net-9": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answerSession}}, // never asked
		}}}
	resumed := make(chan *mcp.CallToolResult, 1)
	go func() { resumed <- s.foreground(context.Background(), next, o) }()
	// The command waits for its gate: the call takes the host asked
	// about already, and must pass over it.
	waitFor(t, "the resumed call to take the second question", func() bool { return len(run.asking) == 0 })
	ts.open("go")
	r = <-resumed
	if r.IsError || text(r) != "resumed\nexit code 0" || len(r.InputRequests) != 0 {
		t.Errorf("the resumed call: %q %+v", text(r), r.InputRequests)
	}
	gs := s.m.Grants(s.session)
	if len(gs) != 1 || gs[0].Pattern != "example.org:443" || gs[0].Shell != "" || gs[0].Deny || gs[0].Until == nil {
		t.Errorf("grants after allow once: %+v", gs)
	}
	if len(s.runs) != 0 {
		t.Errorf("runs left: %v", s.runs)
	}
	// The run is gone: its state names nothing now.
	r = s.foreground(context.Background(), next, o)
	if !r.IsError || !strings.Contains(text(r), fmt.Sprintf("requestState %q", run.id)) {
		t.Errorf("a run that ended, resumed: %q", text(r))
	}
}

// TestForegroundAbandoned checks that a run whose client never comes back
// with the answer stops and is forgotten: its requestState then says so,
// rather than handing out the stopped run's output.
func TestForegroundAbandoned(t *testing.T) {
	defer func(d time.Duration) { abandoned = d }(abandoned)
	abandoned = 100 * time.Millisecond
	s, dir := askServer(t, nil)
	ts := &testServer{t: t, dir: dir}
	o := s.o.Run
	o.Command = []string{"echo $$ > fg.pid; exec sleep 600"}
	run := s.startRun(o)
	pid := ts.pidFile("fg.pid")
	run.asking <- "example.org:443"
	if r := s.await(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "bash"}}, run); r.RequestState != run.id {
		t.Fatalf("no question: %+v", r)
	}
	waitFor(t, "the abandoned run to be forgotten", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.runs) == 0
	})
	if alive(pid) {
		t.Error("the abandoned command still runs")
	}
	next := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "bash", RequestState: run.id}}
	if r := s.foreground(context.Background(), next, o); !r.IsError || !strings.Contains(text(r), "waited too long") {
		t.Errorf("an abandoned run, resumed: %q", text(r))
	}
}
