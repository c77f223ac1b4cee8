package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cshell/cshell/internal/escape"
)

// The tools' schemas and arguments. The Go SDK infers a schema from a
// struct, but gives a pointer or a slice a list of types ("null" and
// the type), which some hosts cannot fill in (the Inspector) or refuse
// outright (hosts backed by Gemini refuse the whole tool list), and it
// answers a bad argument with its validator's text. So the schemas are
// made one type a property (an optional argument is simply not
// required), and the arguments are read here, with a sentence for the
// model that names the argument.

// handler is a tool's work on its decoded arguments.
type handler[In any] func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error)

// addTool registers t with the input schema of In and h behind the
// argument reader.
func addTool[In any](srv *mcp.Server, t *mcp.Tool, h handler[In]) {
	in := inputSchema[In]()
	t.InputSchema = in
	srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a In
		if err := decodeArgs(t.Name, in, req.Params.Arguments, &a); err != nil {
			r, _, _ := toolError(err)
			return r, nil
		}
		r, _, err := h(ctx, req, a)
		if err != nil {
			r, _, _ = toolError(err)
		}
		return r, nil
	})
}

// inputSchema is In's schema with one type a property.
func inputSchema[In any]() *jsonschema.Schema {
	s := mustSchema[In]()
	oneType(s, false)
	return s
}

// oneType rewrites a schema, and those inside it, to one type each. A
// list of a type and "null" becomes the type (input: an optional argument
// is one not given) or no type at all (output: a value that may be null,
// which a schema of one type would refuse); any other list, no type.
func oneType(s *jsonschema.Schema, output bool) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		rest := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		nullable := len(rest) < len(s.Types)
		s.Types = nil
		switch {
		case len(rest) == 1 && !(output && nullable):
			s.Type = rest[0]
		case s.Description == "":
			// Said in words; and a schema with nothing in it is written as
			// true, which some clients cannot read as a property's.
			s.Description = strings.Join(rest, " or ") + ", or null"
		}
	}
	for _, p := range s.Properties {
		oneType(p, output)
	}
	oneType(s.Items, output)
	oneType(s.AdditionalProperties, output)
	for _, d := range s.Defs {
		oneType(d, output)
	}
}

// decodeArgs reads a tool's arguments into a: an object whose names the
// schema knows, each of the type it says. A null is an argument not
// given; a number, a boolean or a list given in the form some hosts send
// ("5", "true", one item for a list) is taken as meant. Every error is
// one sentence that names the argument.
func decodeArgs(tool string, s *jsonschema.Schema, raw any, a any) error {
	var b []byte
	switch v := raw.(type) {
	case nil:
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			return fmt.Errorf("%s's arguments could not be read; give them as a JSON object", tool)
		}
	}
	fields := map[string]json.RawMessage{}
	if t := bytes.TrimSpace(b); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := json.Unmarshal(t, &fields); err != nil {
			return fmt.Errorf("%s takes its arguments as a JSON object of named values (%s)", tool, takes(s))
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range fields {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range names {
		p, ok := s.Properties[k]
		if !ok {
			return fmt.Errorf("%s has no argument %q; it takes %s", tool, escape.Line(k), takes(s))
		}
		v := bytes.TrimSpace(fields[k])
		if bytes.Equal(v, []byte("null")) {
			delete(fields, k) // not given
			continue
		}
		fields[k] = coerce(p, v, strings.HasSuffix(k, "_id"))
	}
	for _, k := range s.Required {
		if _, ok := fields[k]; !ok {
			what := ""
			if p := s.Properties[k]; p != nil && p.Description != "" {
				what = ": " + p.Description
			}
			return fmt.Errorf("%s needs the argument %q%s", tool, k, what)
		}
	}
	for _, k := range names {
		v, ok := fields[k]
		if !ok {
			continue
		}
		// Each argument alone, so that the sentence names it.
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if err := json.Unmarshal(one, a); err != nil {
			return fmt.Errorf("argument %q of %s must be %s, not %s", k, tool, kindOf(s.Properties[k]), jsonKind(v))
		}
	}
	return nil
}

// takes lists a schema's argument names.
func takes(s *jsonschema.Schema) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range s.Properties {
			if !yield(k) {
				return
			}
		}
	})
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

// coerce takes a value in the form some hosts send it: a number or a
// boolean as a string, a single item for a list, a number for an id
// (numbered: shell 3 is "3"). Anything else is left for the type check
// to refuse.
func coerce(p *jsonschema.Schema, v json.RawMessage, id bool) json.RawMessage {
	var str string
	isString := json.Unmarshal(v, &str) == nil
	switch p.Type {
	case "number", "integer":
		if f, err := strconv.ParseFloat(strings.TrimSpace(str), 64); isString && err == nil {
			return json.RawMessage(strconv.FormatFloat(f, 'f', -1, 64))
		}
	case "boolean":
		if b, err := strconv.ParseBool(strings.TrimSpace(str)); isString && err == nil {
			return json.RawMessage(strconv.FormatBool(b))
		}
	case "string":
		if id && !isString && isNumber(v) {
			b, _ := json.Marshal(string(v))
			return b
		}
	case "array":
		if len(v) > 0 && v[0] == '[' {
			var items []json.RawMessage
			if json.Unmarshal(v, &items) == nil && p.Items != nil {
				for i, it := range items {
					items[i] = coerce(p.Items, it, true)
				}
				b, _ := json.Marshal(items)
				return b
			}
			return v
		}
		if p.Items != nil && (isString || isNumber(v)) {
			b, _ := json.Marshal([]json.RawMessage{coerce(p.Items, v, true)})
			return b
		}
	}
	return v
}

func isNumber(v json.RawMessage) bool {
	var n json.Number
	return json.Unmarshal(v, &n) == nil && len(v) > 0 && v[0] != '"'
}

// kindOf says what a schema takes, in words.
func kindOf(p *jsonschema.Schema) string {
	if p == nil {
		return "a value"
	}
	switch p.Type {
	case "integer":
		return "a whole number"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "string":
		return "a string"
	case "array":
		return "a list of " + strings.TrimPrefix(kindOf(p.Items), "a ") + "s"
	case "object":
		return "an object"
	}
	return "a value"
}

// jsonKind says what a JSON value is, in words.
func jsonKind(v json.RawMessage) string {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return "that"
	}
	switch x := x.(type) {
	case string:
		return "a string"
	case float64:
		if x == float64(int64(x)) {
			return "the number " + strconv.FormatInt(int64(x), 10)
		}
		return "a number with a fraction"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "that"
}
