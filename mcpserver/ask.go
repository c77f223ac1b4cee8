package mcpserver

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/shells"
)

// A shell of the server refused a host: the server asks the user through
// the client (elicitation, for a client that declared it when it opened
// with initialize), while the request waits (askHold). The answer is a
// grant: for that shell a while ("once"), for the session, or a refusal,
// which ends the wait. A client of 2026-07-28 has no way to be asked
// outside a request, and a client without elicitation none at all: their
// shells' refusals fail at once, as without a server.

// askHold is how long a refused request of a server that can ask waits
// for the answer, unless the configuration says (network.askSeconds).
const askHold = 60 * time.Second

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

// ask asks the user about one refused host of one of the server's shells,
// at most one question per host and port at a time.
func (s *server) ask(ctx context.Context, n shells.Notice) {
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
	who := "a foreground command"
	if n.ID != "" {
		who = "shell " + n.ID
	}
	msg := fmt.Sprintf("%s (%s) wants %s, which it may not reach. Allow it once (for a minute, this shell), for this session, or deny?",
		who, shells.Sanitize(n.Command), key)
	actx, cancel := context.WithTimeout(ctx, askHold)
	defer cancel()
	res, err := ss.Elicit(actx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{"type": "string", "title": "Network access for " + key,
				"enum": []string{answerOnce, answerSession, answerDeny}, "enumNames": []string{"Allow once", "Allow for this session", "Deny"}},
		},
		"required": []string{"decision"},
	}})
	decision := answerDeny
	if err == nil && res != nil && res.Action == "accept" {
		if d, ok := res.Content["decision"].(string); ok {
			decision = d
		}
	} else if err != nil {
		return // no answer (the client cannot, or took too long): the wait ends by itself
	}
	switch decision {
	case answerSession:
		_, err = s.m.Allow(s.session, []string{key})
	case answerOnce:
		err = s.m.Answer(s.session, n.ID, key, false, onceFor)
	default:
		err = s.m.Answer(s.session, n.ID, key, true, onceFor)
	}
	if err != nil && s.o.Run.Log != nil {
		s.o.Run.Log.Warn("the answer to a network question was not recorded", "host", key, "err", err)
	}
}
