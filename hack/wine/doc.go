// Package wine holds cshell's end-to-end tests for Windows
// (e2e_windows_test.go), built for windows/amd64 and run under wine by
// hack/wine.sh. It has no code of its own.
package wine
