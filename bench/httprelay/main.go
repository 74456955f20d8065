// Command httprelay is the floor of any HTTP tap: a bare
// httputil.ReverseProxy in its own process that flushes each write.
//
//	httprelay UPSTREAM_URL
package main

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
)

func main() {
	u, err := url.Parse(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.FlushInterval = -1
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s%s\n", l.Addr(), u.Path)
	log.Fatal(http.Serve(l, proxy))
}
