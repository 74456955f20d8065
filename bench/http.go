package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// service is a long-lived process serving HTTP.
type service struct {
	cmd *exec.Cmd
	url string
}

var urlLine = regexp.MustCompile(`listening on (http://\S+)`)

// startService starts argv and waits for the line that names its URL.
func startService(argv ...string) (*service, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-found:
		return &service{cmd: cmd, url: u}, nil
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		return nil, fmt.Errorf("%s printed no URL", strings.Join(argv, " "))
	}
}

func (s *service) stop() {
	s.cmd.Process.Signal(interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// httpRun connects a go-sdk client over Streamable HTTP and times calls.
func httpRun(url string, calls int, protocol string) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}, MaxRetries: -1}
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	return callLoop(ctx, cs, calls)
}

// interleaveHTTP runs a session against each URL once per round, rotating
// the order.
func interleaveHTTP(rounds, calls int, protocol string, urls ...string) ([]*result, error) {
	out := make([]*result, len(urls))
	for i := range out {
		out[i] = &result{}
	}
	for r := range rounds {
		for k := range urls {
			i := (k + r) % len(urls)
			res, err := httpRun(urls[i], calls, protocol)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", urls[i], err)
			}
			out[i].rate = append(out[i].rate, res.rate[0])
			out[i].lat = append(out[i].lat, res.lat...)
		}
	}
	return out, nil
}

// httpGroup compares, over Streamable HTTP, the tap with a bare reverse
// proxy (stateful and stateless servers), and the replay server with the
// go-sdk server; mcpmock runs as a user runs it, its live log on (stderr
// is a pipe that startService drains).
func httpGroup(e *env, rounds, calls int, dir string) ([]row, error) {
	var rows []row
	for _, mode := range []struct {
		name     string
		flags    []string
		protocol string
	}{
		{"stateful", nil, "2025-11-25"},
		{"stateless", []string{"-stateless"}, ""},
	} {
		server, err := startService(append([]string{e.server, "-http", "127.0.0.1:0"}, mode.flags...)...)
		if err != nil {
			return nil, err
		}
		relay, err := startService(e.httprelay, server.url)
		if err != nil {
			server.stop()
			return nil, err
		}
		cassette := fmt.Sprintf("%s/http-%s.json", dir, mode.name)
		tap, err := startService(e.mcpmock, "record", "-c", cassette, "--upstream", server.url, "--listen", "127.0.0.1:0")
		if err != nil {
			relay.stop()
			server.stop()
			return nil, err
		}
		res, err := interleaveHTTP(rounds, calls, mode.protocol, server.url, relay.url, tap.url)
		tap.stop()
		relay.stop()
		if err != nil {
			server.stop()
			return nil, err
		}
		rows = append(rows,
			compare("http "+mode.name+": proxy / direct", res[1], res[0], 0),
			compare("http "+mode.name+": tap / proxy", res[2], res[1], 0.95))
		if mode.name == "stateful" {
			replay, err := startService(e.mcpmock, "replay", "-c", cassette, "--listen", "127.0.0.1:0")
			if err != nil {
				server.stop()
				return nil, err
			}
			res, err := interleaveHTTP(rounds, calls, mode.protocol, server.url, replay.url)
			replay.stop()
			if err != nil {
				server.stop()
				return nil, err
			}
			rows = append(rows, compare("http: replay / go-sdk server", res[1], res[0], 2.0))
			floor, err := startService(e.httpfloor, cassette)
			if err != nil {
				server.stop()
				return nil, err
			}
			res, err = interleaveHTTP(rounds, calls, mode.protocol, server.url, floor.url)
			floor.stop()
			if err != nil {
				server.stop()
				return nil, err
			}
			rows = append(rows, compare("http: floor / go-sdk server (bench/httpfloor)", res[1], res[0], 0))
		}
		server.stop()
	}
	return rows, nil
}
