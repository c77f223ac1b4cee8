// Package escape makes text that a shell or a record could have written
// safe to show: in one of cshell's own lines (Line), or as a shell's
// output to a terminal or an agent (Output).
package escape

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line makes a string that a shell or a record could have written
// safe to show in one of cshell's own lines: control characters (the
// newline and tab included) and bytes that are not UTF-8 are written as
// \xNN, so that the text can neither move the cursor, retitle the
// terminal nor pass for a line of cshell's own.
func Line(s string) string {
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
		i += writeVisible(&b, s, i)
	}
	return b.String()
}

// writeVisible writes the character at s[i:] as it may be shown: a byte
// that is not UTF-8 and a control character (C0, DEL, C1) as \xNN, a
// bidirectional control as \uNNNN, anything else as it is. It returns
// the bytes it read.
func writeVisible(b *strings.Builder, s string, i int) int {
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && n <= 1:
		fmt.Fprintf(b, `\x%02x`, s[i])
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		fmt.Fprintf(b, `\x%02x`, r)
	case bidi(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteString(s[i : i+n])
	}
	return n
}

// bidi reports whether r changes the direction text is shown in (the
// embeddings, overrides and isolates of Unicode's bidirectional
// algorithm, and its marks): text that holds them can show what it does
// not say ("Trojan Source"), so cshell writes them as \uNNNN.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// HasControl reports whether s holds a control character or is not UTF-8.
func HasControl(s string) bool { return Line(s) != s }

// ownPrefix starts every line cshell writes among a shell's output (its
// notes, its notices); a line of the shell's that starts so is shown with
// its bracket escaped, so that only cshell's own lines do.
const ownPrefix = "[cshell"

// Output makes shell output safe to show to a terminal or an agent:
// control characters other than newline and tab, and bytes that are not
// UTF-8, are written as \xNN, bidirectional controls as \uNNNN
// (keepColor keeps colour codes, ESC [ ... m,
// for a terminal that asked for them), and a line that starts as cshell's
// own lines do gets its bracket escaped. Nothing is dropped.
func Output(s string, keepColor bool) string {
	var b strings.Builder
	b.Grow(len(s))
	lineStart := true
	for i := 0; i < len(s); {
		if lineStart && strings.HasPrefix(s[i:], ownPrefix) {
			b.WriteString(`\x5b`)
			i++
			lineStart = false
			continue
		}
		lineStart = false
		c := s[i]
		switch {
		case c == '\n':
			b.WriteByte(c)
			lineStart = true
			i++
		case c == '\t':
			b.WriteByte(c)
			i++
		case c == 0x1b && keepColor:
			if n := sgrLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
			fmt.Fprintf(&b, `\x%02x`, c)
			i++
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
			i++
		case c < 0x80:
			b.WriteByte(c)
			i++
		default: // not ASCII: as Line shows it
			i += writeVisible(&b, s, i)
		}
	}
	return b.String()
}

// sgrLen is the length of the colour code (ESC [ digits and ; then m) at
// the start of s, or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 64; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case (c < '0' || c > '9') && c != ';':
			return 0
		}
	}
	return 0
}

// ValidUTF8 keeps s as it is but writes each byte that is not UTF-8 as
// \xNN: JSON has no way to carry such bytes, and would replace them all
// with the same character.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// Strip removes the terminal's control sequences from s, for a reader
// that is no terminal (a model): CSI sequences (ESC [ ... final byte:
// colours, cursor moves, erases), OSC sequences (ESC ] ... BEL or ESC \:
// titles, links), other ESC sequences of two bytes, and a carriage return
// that a newline follows. What is left is shown by Output, Line or
// ValidUTF8 as ever: Strip only removes, and anything it does not know
// stays to be made visible.
func Strip(s string) string {
	if !strings.ContainsAny(s, "\x1b\r") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
			continue
		}
		if c != 0x1b || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '[': // CSI: parameters and intermediates (0x20-0x3f), then a final byte (0x40-0x7e)
			j := i + 2
			for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
				j++
			}
			if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
				i = j + 1
				continue
			}
		case ']', 'P', '_', '^': // OSC, DCS, APC, PM: a string to BEL or ST
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') && s[j] != '\n' {
				j++
			}
			switch {
			case j < len(s) && s[j] == 0x07:
				i = j + 1
				continue
			case j+1 < len(s) && s[j] == 0x1b:
				i = j + 2
				continue
			}
		default:
			if n := s[i+1]; n >= 0x40 && n <= 0x5f || n >= '0' && n <= '~' && n != '[' {
				i += 2 // ESC and one byte: ESC 7, ESC M, ESC =
				continue
			}
		}
		b.WriteByte(c) // not a sequence it knows: left to be made visible
		i++
	}
	return b.String()
}
