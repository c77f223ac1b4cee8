package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
	"github.com/cshell/cshell/mcptasks"
	"github.com/cshell/cshell/shells"
)

// A shell of the server refused a host: the server asks the user through
// the client, while the request waits (askHold). A foreground call asks
// in its own round trips (input requests: 2026-07-28 clients answer them
// and call again, and for older ones the SDK elicits and calls again);
// a background shell's refusal is asked about by its task where it is one
// of a 2026-07-28 client that takes elicitation (input_required, answered
// with tasks/update), else with an elicitation request of the server's,
// which only a client that opened with initialize takes.
// The answer is a grant: for that shell a while ("once"), for the
// session, or a refusal, which ends the wait. Clients without elicitation
// are never asked, and 2026-07-28 clients not about background shells:
// those refusals fail at once, as without a server.

// askHold is how long a refused request of a server that can ask waits
// for the answer, unless the configuration says (network.askSeconds).
const askHold = 60 * time.Second

// taskWait is how long a refusal waits for its shell's task to be made.
const taskWait = 5 * time.Second

// onceFor is how long an "allow once" answer lets that shell reach that
// host and port.
const onceFor = time.Minute

// canAsk reports whether the client declared elicitation.
func (s *server) canAsk() bool {
	s.mu.Lock()
	ss := s.mcp
	s.mu.Unlock()
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// The answers a user may give.
const (
	answerOnce    = "once"
	answerSession = "session"
	answerDeny    = "deny"
)

// ask asks the user about one refused host of one of the server's
// background shells (a foreground call asks in its own round trips:
// foreground.go), at most one question per host and port at a time.
func (s *server) ask(ctx context.Context, n shells.Notice, inTask bool) {
	key := net.JoinHostPort(n.Host, strconv.Itoa(n.Port))
	s.mu.Lock()
	if s.asking[key] {
		s.mu.Unlock()
		return
	}
	s.asking[key] = true
	ss := s.mcp
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asking, key)
		s.mu.Unlock()
	}()
	actx, cancel := context.WithTimeout(ctx, askHold)
	defer cancel()
	q := question("shell "+n.ID, n.Command, key)
	var res *mcp.ElicitResult
	if inTask {
		// The shell's task asks (input_required, answered by tasks/update).
		// A shell that connects at once may be refused before its start
		// has been answered and its task made: wait for the task a while.
		id := taskPrefix + n.ID
		raw, err := s.tasks.Ask(actx, id, "elicitation/create", q)
		for wait := time.Now().Add(taskWait); errors.Is(err, mcptasks.ErrNoInput) && !s.tasks.Known(id) && time.Now().Before(wait); {
			time.Sleep(20 * time.Millisecond)
			raw, err = s.tasks.Ask(actx, id, "elicitation/create", q)
		}
		if err != nil {
			return
		}
		res = &mcp.ElicitResult{}
		if json.Unmarshal(raw, res) != nil {
			res = nil // not an answer: deny
		}
	} else {
		var err error
		if res, err = ss.Elicit(actx, q); err != nil {
			return // no answer (the client cannot, or took too long): the wait ends by itself
		}
	}
	s.answer(n.ID, key, res)
}

// question is what the user is asked about a refused host.
func question(who, command, key string) *mcp.ElicitParams {
	msg := fmt.Sprintf("%s (%s) wants %s, which it may not reach. Allow it once (for a minute), for this session, or deny?",
		who, escape.Line(command), key)
	return &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Network access for " + key,
				"enum": []string{answerOnce, answerSession, answerDeny}, "enumNames": []string{"Allow once", "Allow for this session", "Deny"}},
		},
		"required": []string{"decision"},
	}}
}

// answer records the user's answer about key for a shell ("" for a
// foreground call: the session): anything but an accepted allow denies.
func (s *server) answer(shell, key string, res *mcp.ElicitResult) {
	decision := answerDeny
	if res != nil && res.Action == "accept" {
		if d, ok := res.Content["decision"].(string); ok {
			decision = d
		}
	}
	var err error
	switch decision {
	case answerSession:
		_, err = s.m.Allow(s.session, []string{key})
	case answerOnce:
		err = s.m.Answer(s.session, shell, key, false, onceFor)
	default:
		err = s.m.Answer(s.session, shell, key, true, onceFor)
	}
	if err != nil && s.o.Run.Log != nil {
		s.o.Run.Log.Warn("the answer to a network question was not recorded", "host", key, "err", err)
	}
}

// canAskIn reports whether a call's client takes elicitation: in its
// round trips (2026-07-28) or as a request of the server's (before).
func canAskIn(req *mcp.CallToolRequest) bool {
	if req == nil || req.Params == nil {
		return false
	}
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil
}
