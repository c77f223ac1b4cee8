package shells

import "github.com/cshell/cshell/container"

// Doctor reports what this machine allows and which isolation auto picks.
func Doctor() container.Report { return container.Doctor() }
