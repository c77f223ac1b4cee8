package mcpserver

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestCheckedStdio checks that only whole JSON-RPC messages reach the SDK,
// that a line past maxMessage is answered and passed over, and that the
// end of the input ends the SDK's stream.
func TestCheckedStdio(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	input := strings.Join([]string{good, "junk", "", `{"jsonrpc":"2.0"}`, "{" + strings.Repeat(" ", maxMessage) + "}", good}, "\n")
	var out bytes.Buffer
	r, _ := checkedStdio(strings.NewReader(input), &out)
	passed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(passed) != good+"\n"+good+"\n" {
		t.Errorf("passed to the SDK: %.200q", passed)
	}
	replies := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(replies) != 3 || !strings.Contains(replies[0], `"code":-32700`) || !strings.Contains(replies[1], `"code":-32600`) ||
		!strings.Contains(replies[2], `"code":-32700`) {
		t.Errorf("replies: %q", replies)
	}
}
