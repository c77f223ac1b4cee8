// Command blob serves GET /N with N bytes (zeros, generated, no disk), for
// throughput benchmarks of relays and proxies.
//
//	blob -addr 127.0.0.1:8099
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8099", "listen address")
	flag.Parse()
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/"), 10, 64)
		if err != nil || n < 0 {
			http.Error(w, "GET /N for N bytes", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		_, _ = io.CopyN(w, zeros{}, n)
	})
	log.Fatal(http.ListenAndServe(*addr, nil))
}
