package plan

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"slices"
)

// SandboxKey is equal for two plans whose sandboxes are alike: all of the
// plan but what a held sandbox takes at its start (sandbox.Begin: the
// command, the directory it starts in) and what its caller applies (the
// timeout, the grace, the warnings). A warm sandbox made for one plan
// serves another only when their keys are equal.
func (p *Plan) SandboxKey() string {
	c := *p
	c.Command, c.Argv, c.FS.Start = "", nil, ""
	c.Timeout, c.Grace, c.Warnings = 0, 0, nil
	// gob writes a map in no fixed order: the names given addresses are
	// keyed in order instead.
	var hosts []string
	for name, a := range c.Network.Hosts {
		hosts = append(hosts, fmt.Sprintf("%s=%s", name, a))
	}
	slices.Sort(hosts)
	c.Network.Hosts = nil
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(struct {
		P     Plan
		Hosts []string
	}{c, hosts}); err != nil {
		return "" // never alike: the cold start
	}
	return b.String()
}
