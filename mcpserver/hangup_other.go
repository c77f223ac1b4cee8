//go:build !unix

package mcpserver

import "os"

// watchHangup: elsewhere the line reader's own end of input ends the
// server.
func watchHangup(*os.File, <-chan struct{}, func()) {}
