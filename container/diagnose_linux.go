package container

import "fmt"

// explain turns a container start failure into the sentence of the
// restriction that caused it, when one did (what doctor prints), and
// points at cshell doctor otherwise.
func explain(err error) error {
	if rs := Restrictions(); len(rs) > 0 {
		return fmt.Errorf("%w: %s", ErrSandbox, rs[0].Sentence())
	}
	return fmt.Errorf("%w: %w; run cshell doctor to see what this machine allows", ErrSandbox, err)
}
