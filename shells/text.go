package shells

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// sanitize makes a string that a shell or a record could have written
// safe to show in one of cshell's own lines: control characters (the
// newline and tab included) and bytes that are not UTF-8 are written as
// \xNN, so that the text can neither move the cursor, retitle the
// terminal nor pass for a line of cshell's own.
func sanitize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// hasControl reports whether s holds a control character or is not UTF-8.
func hasControl(s string) bool { return sanitize(s) != s }
