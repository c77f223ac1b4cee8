package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/shells"
)

// foreground runs a command to its end and returns its output and code;
// with a progress token it says how it goes meanwhile. For a client that
// can be asked, a refused host the command waits for ends the call with
// a question instead (an input request), and the command runs on: the
// client's next call, with the answer, takes up the same run.
func (s *server) foreground(ctx context.Context, req *mcp.CallToolRequest, o shells.RunOptions) *mcp.CallToolResult {
	if req != nil && req.Params.RequestState != "" {
		return s.resume(ctx, req)
	}
	if !canAskIn(req) {
		return s.runForeground(ctx, req, o, nil)
	}
	run := s.startRun(o)
	return s.await(ctx, req, run)
}

// maxWaitingCalls bounds the foreground calls waiting for a turn; one
// past it is refused at once. With the running ones it stays below the
// requests the stdio transport holds (maxInFlight), so that this sentence,
// not the transport's, is what a client meets.
const maxWaitingCalls = 128

// turn waits for one of the server's foreground slots
// (shells.maxForegroundCalls), ctx's end, or refuses when too many wait;
// done gives the slot back.
func (s *server) turn(ctx context.Context) (done func(), err error) {
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	default:
	}
	if n := s.waiting.Add(1); n > maxWaitingCalls {
		s.waiting.Add(-1)
		return nil, fmt.Errorf("%d foreground calls run (shells.maxForegroundCalls) and %d more wait for a turn, the most that may; wait for some to end, or run long ones with run_in_background", cap(s.slots), maxWaitingCalls)
	}
	defer s.waiting.Add(-1)
	select {
	case s.slots <- struct{}{}:
		return func() { <-s.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runForeground runs the command to its end (or ctx's).
func (s *server) runForeground(ctx context.Context, req *mcp.CallToolRequest, o shells.RunOptions, out *tailBuffer) *mcp.CallToolResult {
	done, err := s.turn(ctx)
	if err != nil {
		r, _, _ := toolError(err)
		return r
	}
	defer done()
	if o.Timeout == 0 {
		o.Timeout = defaultToolTimeout
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		r, _, _ := toolError(err)
		return r
	}
	defer devnull.Close()
	if out == nil {
		out = &tailBuffer{max: maxToolOutput + dirLineRoom}
	}
	o.Stdin, o.Stdout, o.Stderr = devnull, out, out
	if req != nil && req.Session != nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			stop := progress(ctx, req.Session, tok, out)
			defer stop()
		}
	}
	code, err := shells.Run(ctx, o)
	if err != nil {
		r, _, _ := toolError(err)
		return r
	}
	raw, note := s.takeDir(out.String())
	cut := out.cut
	if over := len(raw) - maxToolOutput; over > 0 {
		cut += over
		raw = raw[over:]
	}
	if cut > 0 {
		// The cut ends at a line's end where the kept part has one.
		if i := strings.IndexByte(raw, '\n'); i >= 0 && i < len(raw)-1 {
			cut += i + 1
			raw = raw[i+1:]
		}
	}
	text := escape.Output(escape.Strip(raw), false)
	if cut > 0 {
		text = fmt.Sprintf("[%d characters cut from the start; the last %d follow; a foreground call keeps no log: run the command with run_in_background to keep all of its output]\n", cut, len(raw)) + text
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if note != "" {
		text += note + "\n"
	}
	text += fmt.Sprintf("exit code %d", code)
	if background.MatchString(o.Shown) {
		text += "\n[cshell: jobs started with & end with this call; start a server or watcher with run_in_background instead]"
	}
	return s.result(text)
}

// background matches a command line that sends a job to the background
// (a & that is not && nor a redirection's >&, &>).
var background = regexp.MustCompile(`(^|[^&<>|])&\s*($|\n|[^&>\d])`)

// fgRun is a foreground call whose command runs on across the round
// trips in which the user is asked.
type fgRun struct {
	id      string
	command string
	out     *tailBuffer
	done    chan struct{}
	res     *mcp.CallToolResult
	cancel  context.CancelFunc
	asking  chan string // host:port of requests that wait for a grant

	mu      sync.Mutex
	asked   map[string]bool   // host:port asked about already
	keys    map[string]string // input request id -> host:port
	waiting *time.Timer       // ends a run whose client stopped answering
}

// abandoned is how long a run waits for the client's next call once it
// asked: past the hold, the question is moot. (A variable for tests.)
var abandoned = askHold + 10*time.Second

func (s *server) startRun(o shells.RunOptions) *fgRun {
	ctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.nCalls++
	run := &fgRun{id: fmt.Sprintf("run-%d", s.nCalls), command: cmp.Or(o.Shown, strings.Join(o.Command, " ")), out: &tailBuffer{max: maxToolOutput + dirLineRoom},
		done: make(chan struct{}), cancel: cancel, asking: make(chan string, 16), asked: map[string]bool{}, keys: map[string]string{}}
	s.runs[run.id] = run
	s.mu.Unlock()
	o.Asking = func(host string, port int) {
		select {
		case run.asking <- fmt.Sprintf("%s:%d", bracket(host), port):
		default: // questions enough on their way
		}
	}
	go func() {
		defer cancel()
		run.res = s.runForeground(ctx, nil, o, run.out)
		close(run.done)
	}()
	return run
}

func bracket(host string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]"
	}
	return host
}

// await waits for the run's end, or a question to ask.
func (s *server) await(ctx context.Context, req *mcp.CallToolRequest, run *fgRun) *mcp.CallToolResult {
	if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
		stop := progress(ctx, req.Session, tok, run.out)
		defer stop()
	}
	for {
		select {
		case <-run.done:
			s.endRun(run)
			return run.res
		case key := <-run.asking:
			run.mu.Lock()
			if run.asked[key] {
				run.mu.Unlock()
				continue
			}
			run.asked[key] = true
			id := fmt.Sprintf("net-%d", len(run.keys)+1)
			run.keys[id] = key
			run.waiting = time.AfterFunc(abandoned, func() {
				// Nobody came back for the answer: the run stops, and is
				// forgotten (its requestState now says it waited too long).
				run.cancel()
				<-run.done
				s.endRun(run)
			})
			run.mu.Unlock()
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{id: question("a foreground command", run.command, key)},
				RequestState: run.id}
		case <-ctx.Done():
			run.cancel()
			<-run.done
			s.endRun(run)
			r, _, _ := toolError(errors.New("the call was cancelled; the command was stopped"))
			return r
		}
	}
}

// resume takes up a run with the client's answers.
func (s *server) resume(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	s.mu.Lock()
	run := s.runs[req.Params.RequestState]
	s.mu.Unlock()
	if run == nil {
		r, _, _ := toolError(fmt.Errorf("requestState %q: no command of this server waits for that answer (it ended, or waited too long); run it again", req.Params.RequestState))
		return r
	}
	run.mu.Lock()
	if run.waiting != nil {
		run.waiting.Stop()
	}
	answers := map[string]*mcp.ElicitResult{}
	for id, resp := range req.Params.InputResponses {
		if key, ok := run.keys[id]; ok {
			er, _ := resp.(*mcp.ElicitResult)
			answers[key] = er
			delete(run.keys, id)
		}
	}
	run.mu.Unlock()
	for key, er := range answers {
		s.answer("", key, er)
	}
	return s.await(ctx, req, run)
}

func (s *server) endRun(run *fgRun) {
	s.mu.Lock()
	delete(s.runs, run.id)
	s.mu.Unlock()
	run.mu.Lock()
	if run.waiting != nil {
		run.waiting.Stop()
	}
	run.mu.Unlock()
}
