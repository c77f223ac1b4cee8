package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/cshell/cshell/internal/kind"
)

// Limits bound one shell's resources; a zero field is no bound.
type Limits struct {
	Memory int64   `json:"memory,omitempty"` // bytes
	Pids   int     `json:"pids,omitempty"`   // tasks (processes and threads) at once
	CPUs   float64 `json:"cpus,omitempty"`   // a share of this machine's CPUs
	// EnforcedBy says what holds the bounds: "cgroup", or "watchdog"
	// (cshell samples the shell; the kernel's per-namespace process limit
	// holds Pids).
	EnforcedBy string `json:"enforced_by,omitempty"`
}

// Empty reports whether no bound is set.
func (l Limits) Empty() bool { return l.Memory == 0 && l.Pids == 0 && l.CPUs == 0 }

// Smallest bounds a shell may be given: below them no shell starts.
const (
	MinMemory = 4 << 20
	MinPids   = 2 // the container's init and the command
	MinCPUs   = 0.01
)

// ErrLimit marks a limit that cannot be used.
var ErrLimit = errors.New("bad limit")

// ParseSize reads a size in bytes, binary units: 512m, 2g, 1.5G, 64MiB,
// 4096 (bytes).
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "b"), "i")
	mult := float64(1)
	if t != "" {
		switch t[len(t)-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) || strings.ContainsAny(t, "xXpP_") {
		return 0, kind.Errorf(ErrLimit, "%q is not a size; write one such as 512m or 2g (binary units)", s)
	}
	v := n * mult
	switch {
	case v < MinMemory:
		return 0, kind.Errorf(ErrLimit, "%s is below the smallest size cshell takes, 4 MiB (4m)", FormatSize(int64(v)))
	case v > 1<<50:
		return 0, kind.Errorf(ErrLimit, "%q is beyond the largest size cshell takes, 1024t", s)
	}
	return int64(v), nil
}

// FormatSize writes a size as people read it: 64 MiB, 1.5 GiB, 512 KiB.
func FormatSize(n int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size {
			v := float64(n) / float64(u.size)
			if v == math.Trunc(v) {
				return fmt.Sprintf("%.0f %s", v, u.unit)
			}
			return fmt.Sprintf("%.1f %s", v, u.unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// CheckPids and CheckCPUs refuse bounds no shell can run under.
func CheckPids(n int) error {
	if n < MinPids || n > 1<<22 {
		return fmt.Errorf("%w: pids %d: give from %d to %d", ErrLimit, n, MinPids, 1<<22)
	}
	return nil
}

func CheckCPUs(x, max float64) error {
	if math.IsNaN(x) || x < MinCPUs || x > max {
		return fmt.Errorf("%w: cpus %v: give from %v to %v (this machine's CPUs)", ErrLimit, x, MinCPUs, max)
	}
	return nil
}

// Lower returns l bounded by the tighter of each of its and o's bounds.
func (l Limits) Lower(o Limits) Limits {
	tighter := func(a, b float64) float64 {
		switch {
		case a == 0:
			return b
		case b == 0:
			return a
		}
		return math.Min(a, b)
	}
	return Limits{
		Memory: int64(tighter(float64(l.Memory), float64(o.Memory))),
		Pids:   int(tighter(float64(l.Pids), float64(o.Pids))),
		CPUs:   tighter(l.CPUs, o.CPUs),
	}
}

// LimitsConfig is the configuration's "limits": every shell's bounds.
type LimitsConfig struct {
	Memory *Size    `json:"memory,omitempty"`
	Pids   *int     `json:"pids,omitempty"`
	CPUs   *float64 `json:"cpus,omitempty"`
}

// Size is a size in a configuration: "2g" or a number of bytes.
type Size int64

// UnmarshalJSON reads "2g", "512m" or 1073741824.
func (s *Size) UnmarshalJSON(b []byte) error {
	var text string
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		if err := json.Unmarshal(b, &text); err != nil {
			return err
		}
	} else {
		text = string(b)
	}
	n, err := ParseSize(text)
	if err != nil {
		return err
	}
	*s = Size(n)
	return nil
}

// Limits are the configured bounds.
func (c *Config) Limits() Limits {
	var l Limits
	if c.LimitsCfg.Memory != nil {
		l.Memory = int64(*c.LimitsCfg.Memory)
	}
	if c.LimitsCfg.Pids != nil {
		l.Pids = *c.LimitsCfg.Pids
	}
	if c.LimitsCfg.CPUs != nil {
		l.CPUs = *c.LimitsCfg.CPUs
	}
	return l
}
