package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cshell/cshell/plan"
	"github.com/cshell/cshell/shells"
)

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "",
		"one\ntwo\n":                 "two",
		"one\ntwo\n\n  \n":           "two",
		"progress 10%\rprogress 20%": "progress 20%",
		"bell\a\n":                   `bell\x07`,
		strings.Repeat("x", 500):     "…" + strings.Repeat("x", maxProgressLine),
	} {
		b := &tailBuffer{max: 1 << 20}
		b.Write([]byte(in))
		if got := b.lastLine(); got != want {
			t.Errorf("lastLine(%.40q) = %.60q, want %.60q", in, got, want)
		}
	}
}

func TestReadyRequest(t *testing.T) {
	r, err := readyRequest(BashArgs{Ready: true, Expose: []string{"5173"}, ReadyLog: "up$"})
	if err != nil || !r.Ports || r.Log != "up$" || r.Timeout.Seconds() != defaultReadyTimeout {
		t.Errorf("readyRequest: %+v, %v", r, err)
	}
	if r, err := readyRequest(BashArgs{ReadyLog: "x", ReadyTimeout: 2.5}); err != nil || r.Timeout.Seconds() != 2.5 {
		t.Errorf("ready_timeout 2.5: %+v, %v", r, err)
	}
	if r, err := readyRequest(BashArgs{}); r != (plan.ReadyRequest{}) || err != nil {
		t.Errorf("no ready: %+v, %v", r, err)
	}
	for _, a := range []BashArgs{
		{ReadyLog: "x", ReadyTimeout: -1},
		{ReadyLog: "x", ReadyTimeout: maxReadyTimeout + 1},
		{ReadyTimeout: 5},
	} {
		if _, err := readyRequest(a); err == nil || strings.Contains(err.Error(), "--") {
			t.Errorf("readyRequest(%+v): %v, want a sentence that names arguments", a, err)
		}
	}
}

// TestOutputSchemasFit checks that what the two read-only tools answer
// fits the schemas they list, down to the nulls of empty fields.
func TestOutputSchemasFit(t *testing.T) {
	code := 3
	for name, c := range map[string]struct {
		schema *jsonschema.Schema
		value  any
	}{
		"bash_output": {outputSchema(), &shells.OutputResult{ID: "1", Status: "exited", ExitCode: &code}},
		"list_shells": {listSchema(), ShellList{Shells: []*shells.Meta{{ID: "1", Status: "running"}}}},
	} {
		rs, err := c.schema.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c.value)
		var v any
		_ = json.Unmarshal(b, &v)
		if err := rs.Validate(v); err != nil {
			t.Errorf("%s: %s does not fit: %v", name, b, err)
		}
	}
}
