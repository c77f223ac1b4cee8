//go:build unix

package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsList checks the four tools as a client lists them: titles,
// annotations, the arguments of each input schema and the output
// schemas of the two read-only tools, and the server's identity.
func TestToolsList(t *testing.T) {
	c := connect(t, clientOptions{})
	if info := c.cs.InitializeResult().ServerInfo; info == nil || info.Name != "cshell" || info.Version != "test" {
		t.Errorf("server info %+v, want cshell test", info)
	}
	if ins := c.cs.InitializeResult().Instructions; !strings.Contains(ins, "run_in_background") {
		t.Errorf("instructions %q do not tell of run_in_background", ins)
	}
	tools, err := c.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"bash":        {"command", "timeout", "run_in_background", "expose", "ready", "ready_log", "ready_timeout", "cwd", "name", "description"},
		"bash_output": {"bash_id", "filter", "wait_seconds", "from_byte"},
		"kill_shell":  {"shell_id", "signal", "grace_seconds"},
		"list_shells": {},
	}
	seen := map[string]bool{}
	for _, tool := range tools.Tools {
		seen[tool.Name] = true
		fields, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %s", tool.Name)
			continue
		}
		var in struct {
			Type       string
			Properties map[string]json.RawMessage
			Required   []string
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &in); err != nil || in.Type != "object" {
			t.Errorf("%s: input schema %s", tool.Name, b)
		}
		for _, f := range fields {
			if _, ok := in.Properties[f]; !ok {
				t.Errorf("%s: input schema lacks %q: %s", tool.Name, f, b)
			}
		}
		if len(in.Properties) != len(fields) {
			t.Errorf("%s: input schema has %d properties, want %d: %s", tool.Name, len(in.Properties), len(fields), b)
		}
		switch tool.Name {
		case "bash":
			if fmt.Sprint(in.Required) != "[command]" {
				t.Errorf("bash requires %v, want [command]", in.Required)
			}
		case "bash_output":
			if fmt.Sprint(in.Required) != "[bash_id]" {
				t.Errorf("bash_output requires %v, want [bash_id]", in.Required)
			}
		}
		a := tool.Annotations
		if a == nil || tool.Title == "" || a.Title != tool.Title || tool.Description == "" {
			t.Errorf("%s: title %q, annotations %+v", tool.Name, tool.Title, a)
			continue
		}
		readOnly := tool.Name == "bash_output" || tool.Name == "list_shells"
		if a.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint %v", tool.Name, a.ReadOnlyHint)
		}
		if (tool.OutputSchema != nil) != readOnly {
			t.Errorf("%s: output schema %v", tool.Name, tool.OutputSchema)
		}
		destructive := a.DestructiveHint == nil || *a.DestructiveHint // the protocol's default is true
		if destructive != (tool.Name == "bash" || tool.Name == "kill_shell") && !readOnly {
			t.Errorf("%s: destructiveHint %v", tool.Name, a.DestructiveHint)
		}
		if a.IdempotentHint != (tool.Name == "kill_shell" || tool.Name == "list_shells") {
			t.Errorf("%s: idempotentHint %v", tool.Name, a.IdempotentHint)
		}
		if openWorld := a.OpenWorldHint != nil && *a.OpenWorldHint; openWorld != (tool.Name == "bash") {
			t.Errorf("%s: openWorldHint %v", tool.Name, a.OpenWorldHint)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("tools %v, want %d", seen, len(want))
	}
	b, _ := json.Marshal(tools.Tools)
	if !strings.Contains(string(b), `"shells"`) {
		t.Errorf("list_shells' output schema does not name shells: %s", b)
	}
	// One type a property, everywhere: hosts refuse a list of types.
	for _, tool := range tools.Tools {
		for what, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			b, _ := json.Marshal(schema)
			var doc any
			_ = json.Unmarshal(b, &doc)
			walkSchema(doc, tool.Name+" "+what, func(path string, typ any) {
				if _, ok := typ.(string); !ok {
					t.Errorf("%s: type %v, want one type", path, typ)
				}
			})
			// Every property is an object (some clients cannot read a
			// schema written as true).
			var props struct{ Properties map[string]any }
			_ = json.Unmarshal(b, &props)
			for name, p := range props.Properties {
				if _, ok := p.(map[string]any); !ok {
					t.Errorf("%s %s: property %s is %v, want an object", tool.Name, what, name, p)
				}
			}
		}
	}
}

// walkSchema calls f with every "type" of a schema and where it is.
func walkSchema(v any, path string, f func(path string, typ any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "type" {
				f(path, x)
				continue
			}
			walkSchema(x, path+"/"+k, f)
		}
	case []any:
		for i, x := range v {
			walkSchema(x, fmt.Sprintf("%s/%d", path, i), f)
		}
	}
}

// TestForeground runs foreground commands: output (stdout and stderr,
// made visible), the exit code, the working directory and cwd.
func TestForeground(t *testing.T) {
	c := connect(t, clientOptions{})
	if err := os.Mkdir(filepath.Join(c.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    map[string]any
		want    string
		wantErr bool
	}{
		{map[string]any{"command": "echo out; echo err >&2; exit 3"}, "out\nerr\nexit code 3", false},
		{map[string]any{"command": "printf 'no newline'"}, "no newline\nexit code 0", false},
		{map[string]any{"command": "true"}, "exit code 0", false},
		{map[string]any{"command": `printf 'bell\a\n'`}, "bell\\x07\nexit code 0", false},
		{map[string]any{"command": "pwd"}, c.dir + "\nexit code 0", false},
		{map[string]any{"command": "pwd", "cwd": "sub"}, filepath.Join(c.dir, "sub") + "\nexit code 0", false},
		{map[string]any{"command": "pwd", "cwd": filepath.Join(c.dir, "sub")}, filepath.Join(c.dir, "sub") + "\nexit code 0", false},
		{map[string]any{"command": "kill -KILL $$"}, "exit code 137", false},
	} {
		got, isErr := c.call("bash", tc.args)
		if got != tc.want || isErr != tc.wantErr {
			t.Errorf("bash %v: %q (error %v), want %q (error %v)", tc.args, got, isErr, tc.want, tc.wantErr)
		}
	}
}

// TestBashArgumentErrors checks that bad arguments are tool errors whose
// sentence names the argument, never a flag, and that the session lives
// on after them.
func TestBashArgumentErrors(t *testing.T) {
	c := connect(t, clientOptions{})
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash", map[string]any{"command": "  "}, "command is empty"},
		{"bash", map[string]any{"command": "true", "timeout": -1}, "timeout -1"},
		{"bash", map[string]any{"command": "true", "timeout": 86401}, "timeout 86401"},
		{"bash", map[string]any{"command": "true", "cwd": "/"}, `cwd "/"`},
		{"bash", map[string]any{"command": "true", "cwd": "../.."}, `cwd "../.."`},
		{"bash", map[string]any{"command": "true", "name": "x"}, "set run_in_background"},
		{"bash", map[string]any{"command": "true", "ready_log": "x"}, "set run_in_background"},
		{"bash", map[string]any{"command": "true", "expose": []string{"8080"}}, "set run_in_background"},
		{"bash", map[string]any{"command": "true", "run_in_background": true, "ready_timeout": 5}, "ready_timeout bounds ready"},
		{"bash", map[string]any{"command": "true", "run_in_background": true, "ready_log": "(", "ready_timeout": 1}, `ready_log "(" is not a valid regular expression`},
		{"bash", map[string]any{"command": "true", "run_in_background": true, "ready_log": "x", "ready_timeout": 601}, "ready_timeout 601"},
		{"bash_output", map[string]any{"bash_id": "1", "wait_seconds": 61}, "wait_seconds 61"},
		{"bash_output", map[string]any{"bash_id": "1", "wait_seconds": -1}, "wait_seconds -1"},
		{"bash_output", map[string]any{"bash_id": "1", "filter": "a("}, `filter "a(" is not a valid regular expression (RE2): missing closing )`},
		{"bash_output", map[string]any{"bash_id": "1", "from_byte": -5}, "from_byte -5"},
		{"bash_output", map[string]any{"bash_id": "99"}, "99 among this server's shells"},
		{"bash_output", map[string]any{"bash_id": "nosuch"}, `named "nosuch" among this server's shells`},
		{"bash_output", map[string]any{"bash_id": "shell-98"}, "98 among this server's shells"},
		{"kill_shell", map[string]any{"shell_id": "1", "signal": "STOP"}, "STOP"},
		{"kill_shell", map[string]any{"shell_id": "1", "grace_seconds": -1}, "grace_seconds -1"},
		{"kill_shell", map[string]any{"shell_id": "1", "grace_seconds": 86401}, "grace_seconds 86401"},
		{"kill_shell", map[string]any{"shell_id": "7"}, "7 among this server's shells"},
	} {
		got, isErr := c.call(tc.tool, tc.args)
		if !isErr || !strings.Contains(got, tc.want) || strings.Contains(got, "--") {
			t.Errorf("%s %v: %q (error %v), want a tool error with %q", tc.tool, tc.args, got, isErr, tc.want)
		}
	}
	// Arguments of the wrong type, unknown or missing, are one sentence
	// that names the argument, never the validator's text; the session
	// goes on.
	ctx := context.Background()
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"bash", map[string]any{"command": 3}, `argument "command" of bash must be a string, not the number 3`},
		{"bash", map[string]any{}, `bash needs the argument "command": the shell command line`},
		{"bash", map[string]any{"command": "true", "timout": 5}, `bash has no argument "timout"; it takes command, cwd, description, expose,`},
		{"bash", map[string]any{"command": "true", "timeout": "soon"}, `argument "timeout" of bash must be a number, not a string`},
		{"bash", []any{"true"}, `bash takes its arguments as a JSON object of named values (command, cwd,`},
		{"bash_output", map[string]any{"bash_id": "1", "from_byte": 1.5}, `argument "from_byte" of bash_output must be a whole number, not a number with a fraction`},
		{"kill_shell", map[string]any{"shell_id": []any{"1"}}, `argument "shell_id" of kill_shell must be a string, not a list`},
		{"list_shells", map[string]any{"all": true}, `list_shells has no argument "all"; it takes no arguments`},
	} {
		r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil || !r.IsError || !strings.HasPrefix(text(r), tc.want) || strings.Contains(text(r), "validating") {
			t.Errorf("%s %v: %q (%v), want an error starting %q", tc.tool, tc.args, text(r), err, tc.want)
		}
	}
	// What some hosts send for a number, a boolean, a list or an id is
	// taken as meant; a null is an argument not given.
	if got, isErr := c.call("bash", map[string]any{"command": "echo taken", "timeout": "30", "run_in_background": "false", "cwd": nil}); isErr || got != "taken\nexit code 0" {
		t.Errorf("coerced arguments: %q (error %v)", got, isErr)
	}
	if got, isErr := c.call("bash", map[string]any{"command": "echo alive"}); isErr || got != "alive\nexit code 0" {
		t.Errorf("after the errors: %q (error %v)", got, isErr)
	}
}
