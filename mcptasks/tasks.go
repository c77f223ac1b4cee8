// Package mcptasks serves Model Context Protocol tasks: tool calls that
// are answered at once with a task and go on after the answer, the client
// polling the task until it ends with the call's result. One store, two
// wire forms:
//
//   - the tasks extension of protocol 2026-07-28 (io.modelcontextprotocol/tasks,
//     SEP-2663): a client declares the extension in a request's
//     _meta capabilities, the server may answer tools/call with a flat
//     CreateTaskResult (resultType "task"), then tasks/get (the result
//     inline once completed), tasks/update and tasks/cancel;
//   - the tasks of protocol 2025-11-25 (SEP-1686): a "task" field on
//     tools/call asks for one, answered {"task": {...}}; then tasks/get,
//     tasks/result (blocks until the end), tasks/list, tasks/cancel and
//     notifications/tasks/status.
//
// The Go SDK (v1.8.0) has no tasks yet (go-sdk #942). This package builds
// them on what it does offer: custom methods, receiving middleware and a
// transport wrapper. When the SDK has its own, this package is what goes;
// nothing outside it knows the wire forms. Safe for concurrent use.
package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Extension is the 2026-07-28 tasks extension's identifier.
const Extension = "io.modelcontextprotocol/tasks"

// modern is the first protocol version whose tasks are the extension.
const modern = "2026-07-28"

// Status is a task's state. A task here never fails in the protocol's
// sense (a JSON-RPC error): a tool's own failure completes it with a
// result that says so.
type Status string

const (
	Working   Status = "working"
	Completed Status = "completed"
	Cancelled Status = "cancelled"
	// InputRequired is a working task with a question for the client
	// (2026-07-28: its inputRequests, answered with tasks/update).
	InputRequired Status = "input_required"
)

// _meta keys of the protocol: a tasks/result answer's task (2025-11-25),
// and what a host may hand the model at once while the task goes on.
const (
	relatedTask       = "io.modelcontextprotocol/related-task"
	immediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// Keys this package puts in _meta on its way through the SDK; neither
// reaches a client.
const (
	askedKey  = "cshell.mcptasks/asked"  // the 2025-11-25 task field of a tools/call
	handleKey = "cshell.mcptasks/handle" // a tool's result that stands for a task
)

// Options are what the tasks need from the server that owns the work.
type Options struct {
	// Cancel stops the work of a task that a client cancelled. The task
	// is cancelled when it is called, in a goroutine of its own.
	Cancel func(id string)
	// Describe returns a working task's status message, asked at every
	// poll; nil keeps the message given to Start.
	Describe func(id string) string
	// Tools are the tools whose calls may be answered with a task:
	// tools/list marks them (execution.taskSupport "optional").
	Tools []string
}

// Tasks holds the tasks of one server session.
type Tasks struct {
	o Options

	mu    sync.Mutex
	tasks map[string]*task
	order []string // ids, oldest first
	conn  mcp.Connection
}

type task struct {
	id      string
	ttl     time.Duration // kept so long after it was made, once it ended
	legacy  bool          // made for a 2025-11-25 request: status notifications go out in that form
	status  Status
	message string
	now     string // for the model at once (immediateResponse)
	created time.Time
	updated time.Time
	result  *mcp.CallToolResult // once completed
	done    chan struct{}       // closed at the end
	inputs  map[string]*question
	asked   int // questions put so far: keys are never used twice
}

// question is one input request of a task, waiting for its answer.
type question struct {
	method string
	params any
	reply  chan json.RawMessage
}

// New returns an empty store.
func New(o Options) *Tasks {
	return &Tasks{o: o, tasks: map[string]*task{}}
}

// Declare adds the extension to the server's capabilities, as
// server/discover and initialize tell them.
func Declare(c *mcp.ServerCapabilities) {
	if c.Extensions == nil {
		c.Extensions = map[string]any{}
	}
	c.Extensions[Extension] = map[string]any{}
}

// Install serves the task methods on srv and adds the middleware that
// tells 2025-11-25 clients of the capability, marks the tools and answers
// a call with its task.
func (t *Tasks) Install(srv *mcp.Server) error {
	for method, h := range map[string]func(context.Context, *mcp.ServerSession, *idParams) (*raw, error){
		"tasks/get": t.get, "tasks/result": t.result, "tasks/cancel": t.cancel,
		"tasks/update": t.update, "tasks/list": t.list,
	} {
		if err := mcp.AddReceivingCustomMethod(srv, method, h); err != nil {
			return err
		}
	}
	srv.AddReceivingMiddleware(t.middleware)
	return nil
}

// Accepts reports whether the client takes a task for this tools/call:
// it declared the extension on the request (2026-07-28), or asked for one
// (2025-11-25).
func Accepts(req *mcp.CallToolRequest) bool {
	if Asked(req) {
		return true
	}
	if req.ProtocolVersion() < modern {
		return false
	}
	caps := req.ClientCapabilities()
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[Extension]
	return ok
}

// Asked reports whether a 2025-11-25 client asked for a task: it expects
// one whatever the call.
func Asked(req *mcp.CallToolRequest) bool {
	return req != nil && req.Params != nil && req.Params.Meta[askedKey] != nil
}

// MaxTTL is the longest a task is kept once it ended, counted from when
// it was made, and the time-to-live of a task whose client asked for none
// (or for longer). A working task is never dropped.
const MaxTTL = time.Hour

// maxEnded bounds the ended tasks kept: past it the oldest go first,
// whatever their time-to-live (a foreground call's result is up to 30 KB).
const maxEnded = 256

// askedTTL is the time-to-live the client asked for (2025-11-25's
// task.ttl, in milliseconds), at most MaxTTL.
func askedTTL(req *mcp.CallToolRequest) time.Duration {
	if req == nil || req.Params == nil {
		return MaxTTL
	}
	asked, _ := req.Params.Meta[askedKey].(map[string]any)
	ms, ok := asked["ttl"].(float64)
	if !ok || ms < 0 || time.Duration(ms)*time.Millisecond > MaxTTL {
		return MaxTTL
	}
	return time.Duration(ms) * time.Millisecond
}

// prune drops the ended tasks past their time-to-live, and the oldest
// ended ones past maxEnded. Call with t.mu held.
func (t *Tasks) prune(now time.Time) {
	ended := 0
	for i := len(t.order) - 1; i >= 0; i-- {
		tk := t.tasks[t.order[i]]
		if tk.status == Working {
			continue
		}
		ended++
		if now.Sub(tk.created) > tk.ttl || ended > maxEnded {
			delete(t.tasks, tk.id)
		}
	}
	kept := t.order[:0]
	for _, id := range t.order {
		if t.tasks[id] != nil {
			kept = append(kept, id)
		}
	}
	t.order = kept
}

// Start makes a working task for the call and returns what the tool's
// handler returns: the middleware answers the call with the task, in the
// form the client speaks, with now for the host to hand the model at once
// ("" for nothing). The id must be new.
func (t *Tasks) Start(req *mcp.CallToolRequest, id, message, now string) (*mcp.CallToolResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tasks[id]; ok {
		return nil, fmt.Errorf("task %s exists", id)
	}
	at := time.Now().UTC()
	t.prune(at)
	t.tasks[id] = &task{id: id, legacy: req.ProtocolVersion() < modern, status: Working, message: message,
		now: now, created: at, updated: at, done: make(chan struct{}), ttl: askedTTL(req)}
	t.order = append(t.order, id)
	r := &mcp.CallToolResult{}
	r.Meta = mcp.Meta{handleKey: id}
	return r, nil
}

// Resume makes a working task that no call of this session started: the
// task of work an earlier server started and this one took over, so that
// the id the client holds answers here. The id must be new.
func (t *Tasks) Resume(id, message string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.tasks[id]; ok {
		return fmt.Errorf("task %s exists", id)
	}
	at := time.Now().UTC()
	t.tasks[id] = &task{id: id, status: Working, message: message, created: at, updated: at,
		done: make(chan struct{}), ttl: MaxTTL}
	t.order = append(t.order, id)
	return nil
}

// Complete ends a working task with the call's result and a summary for
// its status message ("" keeps the last); false if it had ended (or is
// not known).
func (t *Tasks) Complete(id string, r *mcp.CallToolResult, summary string) bool {
	return t.end(id, Completed, r, summary)
}

// Cancel ends a working task as cancelled, saying why; false if it had
// ended (or is not known). The work is the caller's to stop.
func (t *Tasks) Cancel(id, why string) bool {
	return t.end(id, Cancelled, nil, why)
}

func (t *Tasks) end(id string, s Status, r *mcp.CallToolResult, why string) bool {
	t.mu.Lock()
	tk := t.tasks[id]
	if tk == nil || tk.status != Working {
		t.mu.Unlock()
		return false
	}
	tk.status, tk.result, tk.updated = s, r, time.Now().UTC()
	if why != "" {
		tk.message = why
	}
	close(tk.done)
	conn, note := t.conn, tk.legacy
	params := t.wire(tk, false)
	t.mu.Unlock()
	if conn != nil && note {
		// Optional in 2025-11-25, and the one way to tell at once.
		b, err := json.Marshal(params)
		if err == nil {
			_ = conn.Write(context.Background(), &jsonrpc.Request{Method: "notifications/tasks/status", Params: b})
		}
	}
	return true
}

// Working returns the ids of the tasks still working, oldest first.
func (t *Tasks) Working() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for _, id := range t.order {
		if t.tasks[id].status == Working {
			ids = append(ids, id)
		}
	}
	return ids
}

// Known reports whether id names a task.
func (t *Tasks) Known(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tasks[id] != nil
}

// ErrNoInput means a task cannot ask its client: it was made for a
// 2025-11-25 request (that form asks by requests of the server's own), or
// it ended.
var ErrNoInput = errors.New("the task cannot ask its client")

// Ask puts a question to the client of a working task (2026-07-28: the
// task is input_required, with the question in its inputRequests, until
// the client answers with tasks/update) and returns the answer, or ctx's
// error.
func (t *Tasks) Ask(ctx context.Context, id, method string, params any) (json.RawMessage, error) {
	t.mu.Lock()
	tk := t.tasks[id]
	if tk == nil || tk.legacy || tk.status != Working {
		t.mu.Unlock()
		return nil, ErrNoInput
	}
	tk.asked++
	key := fmt.Sprintf("q%d", tk.asked)
	q := &question{method: method, params: params, reply: make(chan json.RawMessage, 1)}
	if tk.inputs == nil {
		tk.inputs = map[string]*question{}
	}
	tk.inputs[key] = q
	tk.updated = time.Now().UTC()
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(tk.inputs, key)
		t.mu.Unlock()
	}()
	select {
	case r := <-q.reply:
		return r, nil
	case <-tk.done:
		return nil, ErrNoInput
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// pollInterval suggests how often to ask: often while a task is young
// (most short commands end then), rarely once it has run a while (a dev
// server runs for hours).
func pollInterval(age time.Duration) time.Duration {
	switch {
	case age < 10*time.Second:
		return time.Second
	case age < time.Minute:
		return 2 * time.Second
	}
	return 5 * time.Second
}

const stamp = "2006-01-02T15:04:05.000Z07:00"

// wire is a task in a client's form; inline adds a completed task's
// result (2026-07-28's tasks/get). Call with t.mu held.
func (t *Tasks) wire(tk *task, modernForm bool) map[string]any {
	poll := pollInterval(time.Since(tk.created)).Milliseconds()
	status := tk.status
	if status == Working && len(tk.inputs) > 0 && modernForm {
		status, poll = InputRequired, 500 // an answer is awaited
	}
	m := map[string]any{"taskId": tk.id, "status": status,
		"createdAt": tk.created.Format(stamp), "lastUpdatedAt": tk.updated.Format(stamp)}
	if status == InputRequired {
		reqs := map[string]any{}
		for k, q := range tk.inputs {
			reqs[k] = map[string]any{"method": q.method, "params": q.params}
		}
		m["inputRequests"] = reqs
	}
	if tk.message != "" {
		m["statusMessage"] = tk.message
	}
	if modernForm {
		m["ttlMs"], m["pollIntervalMs"] = tk.ttl.Milliseconds(), poll
		if tk.status == Completed && tk.result != nil {
			m["result"] = tk.result
		}
	} else {
		m["ttl"], m["pollInterval"] = tk.ttl.Milliseconds(), poll
	}
	return m
}

// refresh asks for a working task's message. Call without t.mu.
func (t *Tasks) refresh(tk *task) {
	if t.o.Describe == nil {
		return
	}
	t.mu.Lock()
	working := tk.status == Working
	t.mu.Unlock()
	if !working {
		return
	}
	msg := t.o.Describe(tk.id)
	t.mu.Lock()
	if tk.status == Working && msg != "" && msg != tk.message {
		tk.message, tk.updated = msg, time.Now().UTC()
	}
	t.mu.Unlock()
}

// idParams are the parameters of every task method.
type idParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses,omitempty"` // tasks/update
}

func (p *idParams) modern() bool {
	if p == nil {
		return false
	}
	v, _ := p.Meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= modern
}

// raw is a result of any shape.
type raw struct {
	mcp.ResultBase
	fields map[string]any
}

func (r *raw) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.fields)+1)
	for k, v := range r.fields {
		m[k] = v
	}
	if len(r.Meta) > 0 {
		m["_meta"] = map[string]any(r.Meta)
	}
	return json.Marshal(m)
}

func invalid(format string, a ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, a...)}
}

func notFound(method string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %q is not part of this protocol version's tasks", method)}
}

// find returns the task a request names.
func (t *Tasks) find(p *idParams) (*task, error) {
	if p == nil || p.TaskID == "" {
		return nil, invalid("taskId is missing: give the id of a task this server made")
	}
	t.mu.Lock()
	t.prune(time.Now().UTC())
	tk := t.tasks[p.TaskID]
	t.mu.Unlock()
	if tk == nil {
		return nil, invalid("no task %q on this server", p.TaskID)
	}
	return tk, nil
}

// get answers tasks/get: the task (both forms), with its result inline
// once completed (2026-07-28).
func (t *Tasks) get(_ context.Context, _ *mcp.ServerSession, p *idParams) (*raw, error) {
	tk, err := t.find(p)
	if err != nil {
		return nil, err
	}
	t.refresh(tk)
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.wire(tk, p.modern())
	if p.modern() {
		m["resultType"] = "complete"
	}
	return &raw{fields: m}, nil
}

// result answers tasks/result (2025-11-25): it waits for the end, then
// gives the call's result.
func (t *Tasks) result(ctx context.Context, _ *mcp.ServerSession, p *idParams) (*raw, error) {
	if p.modern() {
		return nil, notFound("tasks/result")
	}
	tk, err := t.find(p)
	if err != nil {
		return nil, err
	}
	select {
	case <-tk.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	t.mu.Lock()
	status, res := tk.status, tk.result
	t.mu.Unlock()
	if status != Completed || res == nil {
		return nil, invalid("task %s was %s: it has no result", tk.id, status)
	}
	r, err := rewrite(res, func(m map[string]any) {
		meta, _ := m["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta[relatedTask] = map[string]any{"taskId": tk.id}
		m["_meta"] = meta
	})
	if err != nil {
		return nil, err
	}
	return r.(*raw), nil
}

// cancel answers tasks/cancel: a working task is cancelled at once and
// its work stopped after the answer.
func (t *Tasks) cancel(_ context.Context, _ *mcp.ServerSession, p *idParams) (*raw, error) {
	tk, err := t.find(p)
	if err != nil {
		return nil, err
	}
	if t.Cancel(tk.id, "cancelled by the client") {
		if t.o.Cancel != nil {
			go t.o.Cancel(tk.id)
		}
	} else if !p.modern() {
		t.mu.Lock()
		s := tk.status
		t.mu.Unlock()
		return nil, invalid("task %s is already %s: it cannot be cancelled", tk.id, s)
	}
	if p.modern() {
		return &raw{fields: map[string]any{"resultType": "complete"}}, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return &raw{fields: t.wire(tk, false)}, nil
}

// update answers tasks/update (2026-07-28): each response goes to the
// question of its key; one to a key not outstanding (never asked,
// answered already) is ignored, as the extension says.
func (t *Tasks) update(_ context.Context, _ *mcp.ServerSession, p *idParams) (*raw, error) {
	if !p.modern() {
		return nil, notFound("tasks/update")
	}
	tk, err := t.find(p)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	for k, r := range p.InputResponses {
		if q := tk.inputs[k]; q != nil {
			select {
			case q.reply <- r:
				delete(tk.inputs, k)
				tk.updated = time.Now().UTC()
			default:
			}
		}
	}
	t.mu.Unlock()
	return &raw{fields: map[string]any{"resultType": "complete"}}, nil
}

// list answers tasks/list (2025-11-25): every task, oldest first, on one
// page.
func (t *Tasks) list(_ context.Context, _ *mcp.ServerSession, p *idParams) (*raw, error) {
	if p.modern() {
		return nil, notFound("tasks/list")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(time.Now().UTC()) // no task past its time-to-live is listed
	all := make([]map[string]any, 0, len(t.order))
	for _, id := range t.order {
		all = append(all, t.wire(t.tasks[id], false))
	}
	return &raw{fields: map[string]any{"tasks": all}}, nil
}

// middleware adds what the SDK cannot say by itself: the 2025-11-25
// capability at initialize, the tools that take tasks in tools/list, and
// a call's answer with its task.
func (t *Tasks) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch method {
		case "initialize":
			if ir, ok := res.(*mcp.InitializeResult); ok && ir.ProtocolVersion == "2025-11-25" {
				return rewrite(res, func(m map[string]any) {
					caps, _ := m["capabilities"].(map[string]any)
					if caps == nil {
						caps = map[string]any{}
						m["capabilities"] = caps
					}
					caps["tasks"] = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
						"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
				})
			}
		case "tools/list":
			return rewrite(res, func(m map[string]any) {
				tools, _ := m["tools"].([]any)
				for _, tl := range tools {
					if tm, ok := tl.(map[string]any); ok && slices.Contains(t.o.Tools, fmt.Sprint(tm["name"])) {
						tm["execution"] = map[string]any{"taskSupport": "optional"}
					}
				}
			})
		case "tools/call":
			r, ok := res.(*mcp.CallToolResult)
			if !ok || r.Meta[handleKey] == nil {
				return res, nil
			}
			id, _ := r.Meta[handleKey].(string)
			t.mu.Lock()
			defer t.mu.Unlock()
			tk := t.tasks[id]
			if tk == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task of this call is gone"}
			}
			var created *raw
			if tk.legacy {
				created = &raw{fields: map[string]any{"task": t.wire(tk, false)}}
			} else {
				w := t.wire(tk, true)
				delete(w, "result") // the answer is the handle, never the result
				w["resultType"] = "task"
				created = &raw{fields: w}
			}
			if tk.now != "" {
				created.Meta = mcp.Meta{immediateResponse: tk.now}
			}
			return created, nil
		}
		return res, nil
	}
}

// rewrite passes a result through its JSON form, changed by edit. The
// _meta the SDK adds later stays its own.
func rewrite(res mcp.Result, edit func(map[string]any)) (mcp.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	edit(m)
	r := &raw{fields: m}
	if meta, ok := m["_meta"].(map[string]any); ok {
		delete(m, "_meta")
		r.Meta = meta
	}
	return r, nil
}

// Transport wraps the server's transport: a 2025-11-25 tools/call's task
// field, which the SDK does not know and drops, is carried into _meta for
// Asked to see; and the connection is kept for status notifications.
func (t *Tasks) Transport(tr mcp.Transport) mcp.Transport {
	return &transport{Transport: tr, t: t}
}

type transport struct {
	mcp.Transport
	t *Tasks
}

func (tr *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := tr.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	tr.t.mu.Lock()
	tr.t.conn = c
	tr.t.mu.Unlock()
	return &conn{Connection: c}, nil
}

type conn struct{ mcp.Connection }

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" && len(req.Params) > 0 {
		req.Params = carryTask(req.Params)
	}
	return msg, err
}

// carryTask copies params.task into params._meta; anything it cannot read
// goes on unchanged, for the SDK to judge.
func carryTask(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p["task"] == nil {
		return params
	}
	var meta map[string]json.RawMessage
	if m, ok := p["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return params
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[askedKey] = p["task"]
	b, err := json.Marshal(meta)
	if err != nil {
		return params
	}
	p["_meta"] = b
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}
