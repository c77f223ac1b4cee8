package plan

import (
	"encoding/gob"
	"fmt"
	"io"
)

// maxEncoded bounds a plan a supervisor reads.
const maxEncoded = 8 << 20

// Encode writes the plan for the shell's supervisor. It travels as gob,
// not JSON: a command's words, its environment and its paths are bytes,
// which need not be UTF-8, and JSON would change those that are not.
func (p *Plan) Encode(w io.Writer) error {
	return gob.NewEncoder(w).Encode(p)
}

// Decode reads a plan Encode wrote (8 MiB at most).
func Decode(r io.Reader) (*Plan, error) {
	var p Plan
	if err := gob.NewDecoder(io.LimitReader(r, maxEncoded)).Decode(&p); err != nil {
		return nil, fmt.Errorf("read the shell's plan: %w", err)
	}
	return &p, nil
}
