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

// httpRun connects a go-sdk client over Streamable HTTP to the service and
// times calls; where /proc can be read (Linux) it also measures the
// service's CPU a call, from after the session's start to its last answer
// (procCPU).
func httpRun(s *service, calls int, protocol string) (*result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1"}, nil)
	t := &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}, MaxRetries: -1}
	var opts *mcp.ClientSessionOptions
	if protocol != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: protocol}
	}
	cs, err := client.Connect(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	before, berr := procCPU(s.cmd.Process.Pid)
	res, err := callLoop(ctx, cs, calls)
	if err != nil {
		return nil, err
	}
	if after, aerr := procCPU(s.cmd.Process.Pid); berr == nil && aerr == nil && calls > 0 {
		res.cpu = []time.Duration{(after - before) / time.Duration(calls)}
	}
	return res, nil
}

// interleaveHTTP runs a session against each service once per round,
// rotating the order.
func interleaveHTTP(rounds, calls int, protocol string, services ...*service) ([]*result, error) {
	out := make([]*result, len(services))
	for i := range out {
		out[i] = &result{}
	}
	for r := range rounds {
		for k := range services {
			i := (k + r) % len(services)
			res, err := httpRun(services[i], calls, protocol)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", services[i].url, err)
			}
			out[i].rate = append(out[i].rate, res.rate[0])
			out[i].lat = append(out[i].lat, res.lat...)
			out[i].cpu = append(out[i].cpu, res.cpu...)
		}
	}
	return out, nil
}

// httpGroup compares, over Streamable HTTP, the tap with a bare reverse
// proxy (stateful and stateless servers), and the replay server and the
// floor with the go-sdk server; mcpmock runs as a user runs it, its live
// log on (stderr is a pipe that startService drains). Where /proc can be
// read it also returns each service's CPU a call (procCPU), which, unlike
// over stdio, is the service's alone: the upstream server is a process of
// its own.
func httpGroup(e *env, rounds, calls int, dir string) ([]row, []cpuRow, error) {
	var rows []row
	var cpus []cpuRow
	for _, mode := range []struct {
		name     string
		flags    []string
		protocol string
	}{
		{"stateful", nil, "2025-11-25"},
		{"stateless", []string{"-stateless"}, ""},
	} {
		var running []*service
		stopAll := func() {
			for _, s := range running {
				s.stop()
			}
			running = nil
		}
		start := func(argv ...string) (*service, error) {
			s, err := startService(argv...)
			if err == nil {
				running = append(running, s)
			}
			return s, err
		}
		server, err := start(append([]string{e.server, "-http", "127.0.0.1:0"}, mode.flags...)...)
		if err != nil {
			return nil, nil, err
		}
		relay, err := start(e.httprelay, server.url)
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		cassette := fmt.Sprintf("%s/http-%s.json", dir, mode.name)
		tap, err := startService(e.mcpmock, "record", "-c", cassette, "--upstream", server.url, "--listen", "127.0.0.1:0")
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		res, err := interleaveHTTP(rounds, calls, mode.protocol, server, relay, tap)
		tap.stop() // saves the cassette that the replay serves
		if err != nil {
			stopAll()
			return nil, nil, err
		}
		rows = append(rows,
			compare("http "+mode.name+": proxy / direct", res[1], res[0], 0),
			compare("http "+mode.name+": tap / proxy", res[2], res[1], 0.95))
		cpus = appendCPU(cpus,
			cpuRow{name: "http " + mode.name + ": the bare proxy (bench/httprelay)", a: res[1]},
			cpuRow{name: "http " + mode.name + ": `mcpmock record --listen`", a: res[2]},
			cpuRow{name: "http " + mode.name + ": the tap beyond the bare proxy", a: res[2], b: res[1]})
		if mode.name == "stateful" {
			replay, err := start(e.mcpmock, "replay", "-c", cassette, "--listen", "127.0.0.1:0")
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			floor, err := start(e.httpfloor, cassette)
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			res, err := interleaveHTTP(rounds, calls, mode.protocol, server, replay, floor)
			if err != nil {
				stopAll()
				return nil, nil, err
			}
			rows = append(rows,
				compare("http: replay / go-sdk server", res[1], res[0], 2.0),
				compare("http: floor / go-sdk server (bench/httpfloor)", res[2], res[0], 0),
				compare("http: replay / floor", res[1], res[2], 0))
			cpus = appendCPU(cpus,
				cpuRow{name: "http: the go-sdk server", a: res[0]},
				cpuRow{name: "http: `mcpmock replay --listen`", a: res[1]},
				cpuRow{name: "http: the floor (bench/httpfloor)", a: res[2]},
				cpuRow{name: "http: `mcpmock replay --listen` beyond the floor", a: res[1], b: res[2]})
		}
		stopAll()
	}
	return rows, cpus, nil
}

// appendCPU appends the rows whose sides have a CPU figure for every round
// (none where procCPU cannot read them).
func appendCPU(cpus []cpuRow, rows ...cpuRow) []cpuRow {
	for _, r := range rows {
		if len(r.a.cpu) == len(r.a.rate) && (r.b == nil || len(r.b.cpu) == len(r.b.rate)) {
			cpus = append(cpus, r)
		}
	}
	return cpus
}
