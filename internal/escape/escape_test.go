package escape

import "testing"

func TestVisible(t *testing.T) {
	for _, c := range []struct {
		in, want, color string
	}{
		{"plain\ttext\n", "plain\ttext\n", "plain\ttext\n"},
		{"a\x1b]0;title\x07b", `a\x1b]0;title\x07b`, `a\x1b]0;title\x07b`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, "\x1b[31mred\x1b[0m"},
		{"\x1b[2J", `\x1b[2J`, `\x1b[2J`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`, `nul\x00 del\x7f`},
		{"bad \xff\xfe", `bad \xff\xfe`, `bad \xff\xfe`},
		{"c1 \u0085 ok é", `c1 \x85 ok é`, `c1 \x85 ok é`},
		{"[cshell: fake]\nx [cshell ok]\n[cshell", "\\x5bcshell: fake]\nx [cshell ok]\n\\x5bcshell", "\\x5bcshell: fake]\nx [cshell ok]\n\\x5bcshell"},
	} {
		if got := Output(c.in, false); got != c.want {
			t.Errorf("Output(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Output(c.in, true); got != c.color {
			t.Errorf("Output(%q, color) = %q, want %q", c.in, got, c.color)
		}
	}
	if got := ValidUTF8("ok \xff é\x1b"); got != "ok \\xff é\x1b" {
		t.Errorf("validUTF8: %q", got)
	}
	if got := Line("web\x1b[2J\n"); got != `web\x1b[2J\x0a` {
		t.Errorf("sanitize: %q", got)
	}
}
