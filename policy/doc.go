// Package policy holds cshell's rules: which paths a shell may write, read or
// not see at all, which hosts it may reach, and the layered configuration
// (global file, then the project's .cshell.json, which may only tighten)
// that those rules come from. Its values are plain data, safe to share
// between goroutines once built.
package policy
