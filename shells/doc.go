// Package shells runs shells for the command line: foreground runs now,
// and the background-shell manager (state dir, ids, supervisor, output,
// kill, ps) as it grows. It knows nothing of namespaces: the sandbox is
// container's business, the rules are policy's.
package shells
