package escape

import "testing"

func TestStrip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"\x1b[31mred\x1b[0m ok", "red ok"},
		{"\x1b[1;32m  VITE v5\x1b[39m\x1b[22m ready", "  VITE v5 ready"},
		{"\x1b]0;title\x07after", "after"},
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"progress\rdone", "progress\rdone"}, // a lone CR is Output's to show
		{"\x1b[2K\x1b[1Gline", "line"},
		{"\x1b7saved\x1b8", "saved"},
		{"\x1b[", "\x1b["},                               // cut short: left to be made visible
		{"\x1b]unterminated\nx", "\x1b]unterminated\nx"}, // an OSC never crosses a line
		{"\x1b", "\x1b"},
	} {
		if got := Strip(c.in); got != c.want {
			t.Errorf("Strip(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Output(Strip("\x1b[31mred\x1b[0m\x07"), false); got != `red\x07` {
		t.Errorf("Output(Strip(...)) = %q", got)
	}
}
