package policy

import (
	"strings"
	"testing"
)

func TestParseHostPattern(t *testing.T) {
	tests := []struct {
		in      string
		want    HostPattern
		wantErr bool
	}{
		{in: "example.com", want: HostPattern{Host: "example.com"}},
		{in: "Example.COM", want: HostPattern{Host: "example.com"}},
		{in: "  example.com\t", want: HostPattern{Host: "example.com"}},
		{in: "localhost", want: HostPattern{Host: "localhost"}},
		{in: "10.0.0.1:22", want: HostPattern{Host: "10.0.0.1", Port: 22}},
		{in: "*.example.com", want: HostPattern{Host: "example.com", Wildcard: true}},
		{in: "*.Sub.Example.com", want: HostPattern{Host: "sub.example.com", Wildcard: true}},
		{in: "*.com", want: HostPattern{Host: "com", Wildcard: true}},
		{in: "example.com:443", want: HostPattern{Host: "example.com", Port: 443}},
		{in: "*.example.com:8080", want: HostPattern{Host: "example.com", Wildcard: true, Port: 8080}},
		{in: "a:1", want: HostPattern{Host: "a", Port: 1}},
		{in: "a:65535", want: HostPattern{Host: "a", Port: 65535}},

		{in: "", wantErr: true},
		{in: "   ", wantErr: true},
		{in: "*", wantErr: true},
		{in: "*.", wantErr: true},
		{in: "*.:443", wantErr: true},
		{in: ":443", wantErr: true},
		{in: "*example.com", wantErr: true},
		{in: "*.*.example.com", wantErr: true},
		{in: "ex*ample.com", wantErr: true},
		{in: "api.*.example.com", wantErr: true},
		{in: ".example.com", wantErr: true},
		{in: "example.com.", want: HostPattern{Host: "example.com"}},
		{in: "Bücher.Example", want: HostPattern{Host: "xn--bcher-kva.example"}},
		{in: "::1", want: HostPattern{Host: "::1"}},
		{in: "[::1]", want: HostPattern{Host: "::1"}},
		{in: "127.0.0.1", want: HostPattern{Host: "127.0.0.1"}},
		{in: "*.127.0.0.1", wantErr: true},
		{in: "[::1]:0", wantErr: true},
		{in: "a..b", wantErr: true},
		{in: "example.com:0", wantErr: true},
		{in: "example.com:65536", wantErr: true},
		{in: "example.com:-1", wantErr: true},
		{in: "example.com:", wantErr: true},
		{in: "example.com:http", wantErr: true},
		{in: "a:1:2", wantErr: true},
		{in: "[::1]:443", want: HostPattern{Host: "::1", Port: 443}},
		{in: "http://example.com", wantErr: true},
		{in: "example.com/path", wantErr: true},
		{in: "user@example.com", wantErr: true},
		{in: "exa mple.com", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseHostPattern(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseHostPattern(%q) = %+v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHostPattern(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseHostPattern(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func mustPattern(t *testing.T, s string) HostPattern {
	t.Helper()
	p, err := ParseHostPattern(s)
	if err != nil {
		t.Fatalf("ParseHostPattern(%q): %v", s, err)
	}
	return p
}

func TestHostPatternMatches(t *testing.T) {
	tests := []struct {
		pattern string
		host    string
		port    int
		want    bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "example.com", 80, true},
		{"example.com", "EXAMPLE.com", 443, true},
		{"example.com", "example.com.", 443, true},
		{"example.com", "api.example.com", 443, false},
		{"example.com", "example.org", 443, false},
		{"example.com", "notexample.com", 443, false},
		{"example.com:443", "example.com", 443, true},
		{"example.com:443", "example.com", 80, false},
		{"*.example.com", "api.example.com", 443, true},
		{"*.example.com", "a.b.example.com", 22, true},
		{"*.example.com", "API.Example.COM.", 443, true},
		{"*.bücher.example", "www.xn--bcher-kva.example", 443, true},
		{"::1", "[::1]", 80, true},
		{"127.0.0.1", "127.000.0.1", 80, false},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com", "notexample.com", 443, false},
		{"*.example.com", "example.com.evil.org", 443, false},
		{"*.example.com:8080", "api.example.com", 8080, true},
		{"*.example.com:8080", "api.example.com", 443, false},
	}
	for _, tt := range tests {
		p := mustPattern(t, tt.pattern)
		if got := p.Matches(tt.host, tt.port); got != tt.want {
			t.Errorf("%q.Matches(%q, %d) = %v, want %v", tt.pattern, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestHostPatternCovers(t *testing.T) {
	tests := []struct {
		p, q string
		want bool
	}{
		{p: "example.com", q: "example.com", want: true},
		{p: "Example.com", q: "example.COM", want: true},
		{p: "example.com", q: "example.com:443", want: true},
		{p: "example.com:443", q: "example.com:443", want: true},
		{p: "example.com:443", q: "example.com", want: false},
		{p: "example.com:443", q: "example.com:80", want: false},
		{p: "example.com", q: "api.example.com", want: false},
		{p: "example.com", q: "*.example.com", want: false},
		{p: "api.example.com", q: "*.example.com", want: false},
		{p: "*.example.com", q: "api.example.com", want: true},
		{p: "*.example.com", q: "api.example.com:443", want: true},
		{p: "*.example.com", q: "a.b.example.com", want: true},
		{p: "*.example.com", q: "*.a.example.com", want: true},
		{p: "*.example.com", q: "example.com", want: false},
		{p: "*.example.com", q: "notexample.com", want: false},
		{p: "*.example.com", q: "*.com", want: false},
		{p: "*.a.example.com", q: "*.example.com", want: false},
		{p: "*.a.example.com", q: "b.example.com", want: false},
		{p: "*.example.com:443", q: "api.example.com:443", want: true},
		{p: "*.example.com:443", q: "api.example.com", want: false},
		{p: "*.example.com:443", q: "api.example.com:80", want: false},
		{
			p: "*.example.com", q: "*.example.com", want: true,
		},
		{
			p: "*.example.com", q: "*.example.com:443", want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.p+" covers "+tt.q, func(t *testing.T) {
			p, q := mustPattern(t, tt.p), mustPattern(t, tt.q)
			if got := p.Covers(q); got != tt.want {
				t.Errorf("%q.Covers(%q) = %v, want %v", tt.p, tt.q, got, tt.want)
			}
		})
	}
}

// TestCoversAgreesWithMatches checks Covers against Matches on sample
// hosts: if p covers q, every sample q matches must match p too.
func TestCoversAgreesWithMatches(t *testing.T) {
	patterns := []string{
		"example.com", "example.com:443", "api.example.com", "*.example.com",
		"*.example.com:443", "*.a.example.com", "a.example.com", "other.org",
	}
	hosts := []string{"example.com", "api.example.com", "a.example.com", "x.a.example.com", "other.org", "x.other.org"}
	ports := []int{80, 443}
	for _, ps := range patterns {
		for _, qs := range patterns {
			p, q := mustPattern(t, ps), mustPattern(t, qs)
			if !p.Covers(q) {
				continue
			}
			for _, h := range hosts {
				for _, port := range ports {
					if q.Matches(h, port) && !p.Matches(h, port) {
						t.Errorf("%q covers %q, but %s:%d matches only the latter", ps, qs, h, port)
					}
				}
			}
		}
	}
}

// TestHostPatternURL checks that a URL given for a host names the host to
// give instead.
func TestHostPatternURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://x.com":                   "such as x.com",
		"https://registry.npmjs.org/pkg": "such as registry.npmjs.org",
	} {
		if _, err := ParseHostPattern(in); err == nil || !strings.Contains(err.Error(), "is a URL") || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHostPattern(%q): %v, want it to say %q", in, err, want)
		}
	}
}
