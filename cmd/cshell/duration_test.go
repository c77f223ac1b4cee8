package main

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"": 0, "90s": 90 * time.Second, "5m": 5 * time.Minute, "1.5": 1500 * time.Millisecond,
		"0.001": time.Millisecond, "876000h": 876000 * time.Hour, "3153600000": 3153600000 * time.Second,
	}
	for in, want := range good {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// Each of these once overflowed into a negative duration or read as
	// "no limit".
	for _, in := range []string{"0", "-1", "-5m", "NaN", "nan", "Inf", "+Inf", "-Inf", "1e10", "1e30", "1e400",
		"876001h", "9999999h", "abc", "5 m", "s"} {
		if got, err := parseDuration(in); err == nil {
			t.Errorf("parseDuration(%q) = %v, want an error", in, got)
		}
	}
}
