// Command fidelity drives the MCP project's reference server
// (npm @modelcontextprotocol/server-everything) with the official TypeScript
// SDK client (npm @modelcontextprotocol/sdk), both pinned in
// package-lock.json, through a fixed script of about fifty steps
// (client.mjs), and compares what the client saw in four legs per transport:
//
//   - live: the client against server-everything;
//   - tap: through mcpmock record (-- COMMAND for stdio, --upstream URL
//     --listen for HTTP), which writes a cassette;
//   - replay: against mcpmock replay of that cassette, on the same transport;
//   - cross: against mcpmock replay of the cassette recorded on the other
//     transport (stdio's over HTTP and SSE, HTTP's over stdio).
//
// Each step's output is normalized (normalize.go: ids, times and session ids
// that differ from run to run) and compared with the live output of the
// transport the cassette was recorded on. It prints one table per transport,
// step × (live, tap, replay, cross), and the differences, and exits 1 when
// the tap differs from live anywhere (over Streamable HTTP, except that a
// message on the GET stream and an answer on a POST stream passed each
// other), or the replay or cross leg does (unless -report-only).
//
// It needs Node.js (20 or later) and npm, and is not part of go test. From
// the module root:
//
//	go run ./fidelity
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/proc"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

type config struct {
	dir        string // the fidelity directory (package.json, client.mjs, node_modules)
	out        string // where outputs, logs and cassettes go
	transport  string
	step       string
	noInstall  bool
	reportOnly bool
}

// legTimeout bounds one run of the client script: live it takes about ten
// seconds; a replay that never answers costs the client's 5s per request.
const legTimeout = 3 * time.Minute

func main() {
	var c config
	flag.StringVar(&c.dir, "dir", "fidelity", "the directory of package.json and client.mjs (run from the module root)")
	flag.StringVar(&c.out, "out", "", "directory for the outputs, logs and cassettes (default: a new temporary directory, kept)")
	flag.StringVar(&c.transport, "transport", "all", `the client's transport: "stdio", "http", "sse" or "all"`)
	flag.StringVar(&c.step, "step", "", "run only the steps whose name matches this regular expression (initialize always runs)")
	flag.BoolVar(&c.noInstall, "no-install", false, "do not run npm ci (node_modules is already installed)")
	flag.BoolVar(&c.reportOnly, "report-only", false, "exit 0 when only the replay differs from live (a tap difference still exits 1)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "fidelity: no arguments expected")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, c, os.Stdout)
	if err != nil && ctx.Err() != nil {
		err = errors.New("interrupted; every process it started is stopped")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fidelity:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// transports returns the transports the -transport flag names.
func transports(flagValue string) ([]string, error) {
	switch flagValue {
	case "all":
		return []string{"stdio", "http", "sse"}, nil
	case "stdio", "http", "sse":
		return []string{flagValue}, nil
	}
	return nil, fmt.Errorf(`-transport %q: want "stdio", "http", "sse" or "all"`, flagValue)
}

// crossSource is the transport whose cassette the cross leg of t replays.
func crossSource(t string) string {
	if t == "stdio" {
		return "http"
	}
	return "stdio"
}

// A harness holds what every leg needs.
type harness struct {
	config
	mcpmock string // the binary
	server  string // server-everything's dist/index.js
	client  string // client.mjs
}

// run runs every leg and prints the tables to stdout; it reports whether
// the legs are identical to live as -report-only asks.
func run(ctx context.Context, c config, stdout io.Writer) (bool, error) {
	ts, err := transports(c.transport)
	if err != nil {
		return false, err
	}
	if c.step != "" {
		if _, err := regexp.Compile(c.step); err != nil {
			return false, fmt.Errorf("-step: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.dir, "package-lock.json")); err != nil {
		return false, fmt.Errorf("%s/package-lock.json not found: run from the module root (go run ./fidelity) or give -dir", c.dir)
	}
	if c.dir, err = filepath.Abs(c.dir); err != nil {
		return false, err
	}
	if c.out == "" {
		if c.out, err = os.MkdirTemp("", "mcpmock-fidelity-"); err != nil {
			return false, err
		}
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		return false, err
	}
	if c.out, err = filepath.Abs(c.out); err != nil {
		return false, err
	}
	fmt.Fprintf(os.Stderr, "fidelity: outputs, logs and cassettes go to %s\n", c.out)
	began := time.Now()

	if !c.noInstall {
		if err := proc.Command(ctx, c.out, "npm-ci.log", "npm", "ci", "--prefix", c.dir, "--no-audit", "--no-fund"); err != nil {
			return false, fmt.Errorf("npm ci --prefix %s: %w (see %s)", c.dir, err, filepath.Join(c.out, "npm-ci.log"))
		}
	}
	h := &harness{
		config:  c,
		mcpmock: filepath.Join(c.out, "bin", "mcpmock"),
		server:  filepath.Join(c.dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"),
		client:  filepath.Join(c.dir, "client.mjs"),
	}
	if _, err := os.Stat(h.server); err != nil {
		return false, fmt.Errorf("server-everything is not installed (%w): run without -no-install", err)
	}
	if err := proc.Command(ctx, c.out, "build.log", "go", "build", "-o", h.mcpmock, "./cmd/mcpmock"); err != nil {
		return false, fmt.Errorf("go build ./cmd/mcpmock: %w (see %s)", err, filepath.Join(c.out, "build.log"))
	}

	// Live and tap per transport first: the cross legs need every cassette.
	outputs := map[string]map[string][]stepOutput{} // transport → leg → steps
	for _, t := range ts {
		outputs[t] = map[string][]stepOutput{}
		// A cassette left in -out by an earlier run is not replayed.
		if err := os.Remove(h.cassette(t)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, err
		}
		for _, leg := range []string{"live", "tap", "replay"} {
			steps, err := h.leg(ctx, t, leg, h.cassette(t))
			if err != nil {
				return false, err
			}
			outputs[t][leg] = steps
		}
	}
	for _, t := range ts {
		src := crossSource(t)
		if outputs[src] == nil {
			continue
		}
		steps, err := h.leg(ctx, t, "cross", h.cassette(src))
		if err != nil {
			return false, err
		}
		outputs[t]["cross"] = steps
	}

	ok := true
	for _, t := range ts {
		r := compare(t, outputs[t], outputs[crossSource(t)]["live"])
		r.print(stdout)
		if r.tapDiffers() {
			ok = false
		}
		if r.replayDiffers() && !c.reportOnly {
			ok = false
		}
		for _, leg := range []string{"tap", "replay", "cross"} {
			if line := h.summary(t, leg); line != "" {
				fmt.Fprintf(stdout, "%s %s: %s\n", t, leg, line)
			}
		}
		fmt.Fprintf(stdout, "cassettes: %s", h.cassette(t))
		if outputs[t]["cross"] != nil {
			fmt.Fprintf(stdout, " (cross replays %s)", h.cassette(crossSource(t)))
		}
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "fidelity: %s in %s; outputs, logs and cassettes in %s\n", strings.Join(ts, ", "), time.Since(began).Round(time.Second), c.out)
	return ok, nil
}

func (h *harness) cassette(t string) string {
	return filepath.Join(h.out, t+".cassette.json")
}

// leg runs the client script once on transport t; leg says against what
// (live, tap, replay or cross, the last two replaying cassette). The
// client's lines go to out/t-leg.jsonl, its stderr (and a stdio mcpmock's)
// to out/t-leg.log, an HTTP mcpmock's stderr to out/t-leg-mcpmock.log.
func (h *harness) leg(ctx context.Context, t, leg, cassette string) ([]stepOutput, error) {
	ctx, cancel := context.WithTimeout(ctx, legTimeout)
	defer cancel()
	name := t + "-" + leg
	fmt.Fprintf(os.Stderr, "fidelity: %s\n", name)
	var target []string // the client's arguments after its transport
	if t == "stdio" {
		switch leg {
		case "live":
			target = []string{"node", h.server, "stdio"}
		case "tap":
			target = []string{h.mcpmock, "record", "-c", cassette, "--", "node", h.server, "stdio"}
		default:
			target = []string{h.mcpmock, "replay", "-c", cassette}
		}
	} else {
		url, stop, err := h.httpTarget(ctx, t, leg, cassette)
		if err != nil {
			return nil, err
		}
		defer stop()
		target = []string{url}
	}
	args := []string{h.client}
	if h.step != "" {
		args = append(args, "--step", h.step)
	}
	args = append(args, t)
	args = append(args, target...)
	stdout, err := os.Create(filepath.Join(h.out, name+".jsonl"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(h.out, name+".log"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = h.out
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, ctx.Err()
	}
	steps, err := readSteps(stdout.Name())
	if err != nil {
		return nil, err
	}
	if runErr != nil {
		// The table shows the steps that are missing; the log says why.
		fmt.Fprintf(os.Stderr, "fidelity: %s: the client: %v after %d steps (see %s)\n", name, runErr, len(steps), stderr.Name())
	}
	return steps, nil
}

// httpTarget starts what the client of an HTTP or SSE leg talks to and
// returns its URL and how to stop it.
func (h *harness) httpTarget(ctx context.Context, t, leg, cassette string) (string, func(), error) {
	path := "/mcp"
	if t == "sse" {
		path = "/sse"
	}
	var upstream string
	if leg == "live" || leg == "tap" {
		addr, err := proc.FreeAddr()
		if err != nil {
			return "", nil, err
		}
		mode := map[string]string{"http": "streamableHttp", "sse": "sse"}[t]
		srv, err := proc.Start(filepath.Join(h.out, t+"-"+leg+"-server.log"), []string{"PORT=" + portOf(addr)},
			"node", "--import", filepath.Join(h.dir, "loopback.mjs"), h.server, mode)
		if err != nil {
			return "", nil, err
		}
		if err := proc.WaitDial(ctx, addr, 15*time.Second); err != nil {
			srv.Stop()
			return "", nil, fmt.Errorf("server-everything %s: %w (see %s-%s-server.log)", mode, err, t, leg)
		}
		upstream = "http://" + addr + path
		if leg == "live" {
			return upstream, srv.Stop, nil
		}
		p, url, err := proc.StartMCPMock(ctx, filepath.Join(h.out, t+"-"+leg+"-mcpmock.log"), h.mcpmock,
			"record", "-c", cassette, "--upstream", upstream, "--listen", "127.0.0.1:0")
		if err != nil {
			srv.Stop()
			return "", nil, err
		}
		// mcpmock first: it saves the cassette on SIGTERM.
		return strings.TrimSuffix(url, "/mcp") + path, func() { p.Stop(); srv.Stop() }, nil
	}
	p, url, err := proc.StartMCPMock(ctx, filepath.Join(h.out, t+"-"+leg+"-mcpmock.log"), h.mcpmock,
		"replay", "-c", cassette, "--listen", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	return strings.TrimSuffix(url, "/mcp") + path, p.Stop, nil
}

var summaryLine = regexp.MustCompile(`(?m)^mcpmock: ((?:recorded|replayed) .*)$`)

// summary returns the one-line summary mcpmock printed on exit in leg's log,
// or "" if there is none.
func (h *harness) summary(t, leg string) string {
	name := t + "-" + leg + "-mcpmock.log"
	if t == "stdio" {
		name = t + "-" + leg + ".log" // a stdio mcpmock writes to the client's stderr
	}
	data, err := os.ReadFile(filepath.Join(h.out, name))
	if err != nil {
		return ""
	}
	m := summaryLine.FindAllSubmatch(data, -1)
	if len(m) == 0 {
		return ""
	}
	return string(m[len(m)-1][1])
}

func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}
