package shells

import (
	"fmt"

	"github.com/cshell/cshell/cache"
	"github.com/cshell/cshell/container"
)

// Doctor reports what this machine allows and which isolation auto picks,
// and where container shells keep their package caches (home: $HOME).
func Doctor(home string) container.Report {
	r := container.Doctor()
	c := container.Check{Name: "caches", OK: true}
	switch root := cache.Root(home); {
	case root == "":
		c.Detail = "no cache folder ($HOME is not set; CSHELL_CACHE_DIR names one): package managers in shells keep no cache between shells"
	default:
		n := 0
		if s, err := cache.Open(root); err != nil {
			c.OK, c.Detail = false, fmt.Sprintf("%v; shells run without package caches", err)
			break
		} else {
			if list, err := s.List(false); err == nil {
				n = len(list)
			}
			s.Close()
		}
		c.Detail = fmt.Sprintf("package managers' and build tools' caches of container shells are kept per working directory in %s (%d so far; cshell cache lists them)", root, n)
	}
	r.Checks = append(r.Checks, c)
	if r.Isolation == container.Container {
		r.Checks = append(r.Checks, container.Check{Name: "warm sandboxes", OK: true,
			Detail: fmt.Sprintf("%d made ahead by cshell serve wait for a foreground call (each serves one call, then ends; idle, they use no CPU)", container.CountRunning(warmPrefix))})
	}
	return r
}
