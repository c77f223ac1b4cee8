package netrelay

import (
	"errors"
	"testing"
)

var exposeTests = []struct {
	in   string
	want string // "" means an error
}{
	{"5173", "127.0.0.1:5173"},
	{"1", "127.0.0.1:1"},
	{"65535", "127.0.0.1:65535"},
	{"127.0.0.1:8080", "127.0.0.1:8080"},
	{"localhost:8080", "127.0.0.1:8080"},
	{"0.0.0.0:80", "0.0.0.0:80"},
	{"[::1]:3000", "[::1]:3000"},
	{"[::]:3000", "[::]:3000"},
	{" 8080 ", "127.0.0.1:8080"},
	{"0", ""},
	{"70000", ""},
	{"abc", ""},
	{"host:", ""},
	{"127.0.0.1:", ""},
	{":80", ""},
	{"example.com:80", ""},
	{"::1:80", ""},
	{"[fe80::1%eth0]:80", ""},
	{"-1", ""},
	{"+80", ""},
	{"", ""},
	{"80:80", ""},
}

func TestParseExpose(t *testing.T) {
	for _, tt := range exposeTests {
		ap, err := ParseExpose(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParseExpose(%q) = %v, want an error", tt.in, ap)
		case tt.want == "" && !errors.Is(err, ErrBadExpose):
			t.Errorf("ParseExpose(%q) error %v does not wrap ErrBadExpose", tt.in, err)
		case tt.want != "" && (err != nil || ap.String() != tt.want):
			t.Errorf("ParseExpose(%q) = %v, %v; want %s", tt.in, ap, err, tt.want)
		}
	}
	if ap, _ := ParseExpose("0.0.0.0:80"); !Public(ap) {
		t.Error("0.0.0.0 is not public")
	}
	if ap, _ := ParseExpose("[::1]:80"); Public(ap) {
		t.Error("::1 is public")
	}
}

func FuzzParseExpose(f *testing.F) {
	for _, tt := range exposeTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ap, err := ParseExpose(s)
		if err != nil {
			if !errors.Is(err, ErrBadExpose) {
				t.Fatalf("error %v does not wrap ErrBadExpose", err)
			}
			return
		}
		if ap.Port() == 0 || !ap.Addr().IsValid() {
			t.Fatalf("ParseExpose(%q) = %v", s, ap)
		}
		// What it accepts, it accepts again in its own spelling.
		again, err := ParseExpose(ap.String())
		if err != nil || again != ap {
			t.Fatalf("round trip of %q: %v -> %v, %v", s, ap, again, err)
		}
	})
}
