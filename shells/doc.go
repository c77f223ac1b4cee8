// Package shells is cshell's state and its shells' lives: the state dir
// (held by descriptor, trusted only when it is the one cshell made), shell
// ids and records, capped logs and their reads (output, logs, wait-ready),
// kill, ps, clean, completion notices, foreground runs (Run), and the
// background supervisor process (Supervise) that owns a shell to its end.
// The sandbox itself is package sandbox's; the rules are policy's. A
// Manager is safe for concurrent use, also by several cshell processes.
package shells
