// Command httpd is the HTTP target of hack/bench/relay.sh: every request is
// answered with the 3 bytes "ok\n". It honours "Connection: close" (net/http
// closes the connection after the reply) and keeps other connections alive
// with no idle timeout, so that idle connections stay open as long as the
// client holds them.
//
// usage: httpd [ADDR]    ADDR as net.Listen takes it, e.g. :8080 or
// 127.0.0.1:8080 (default :8080)
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"
)

func main() {
	addr := ":8080"
	switch len(os.Args) {
	case 1:
	case 2:
		addr = os.Args[1]
	default:
		fmt.Fprintln(os.Stderr, "usage: httpd [ADDR]")
		os.Exit(2)
	}
	body := []byte("ok\n")
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(body)
	})
	log.Fatal((&http.Server{Addr: addr, Handler: h}).ListenAndServe())
}
