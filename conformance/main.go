// Command conformance runs the public MCP conformance suite for servers
// (npm @modelcontextprotocol/conformance, pinned in package-lock.json)
// three times against one server: live, through mcpmock's HTTP tap
// (mcpmock record --upstream URL --listen), and against mcpmock's replay of
// the cassette the tap wrote. It prints one table, scenario × (live, tap,
// replay), and exits 1 when the tap or the replay passes fewer checks than
// the live server, or a check that passes live does not pass there.
//
// It needs Node.js (20 or later) and npm, and is not part of go test. From
// the module root:
//
//	go run ./conformance
//
// By default the server is the go-sdk's conformance "everything" server
// (github.com/modelcontextprotocol/go-sdk/conformance/everything-server, built
// from the module cache), stateful; -upstream URL tests another one.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/proc"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// everythingServer is the go-sdk's server for the conformance suite.
const everythingServer = "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"

type config struct {
	dir         string // the conformance directory (package.json, node_modules)
	out         string // where results, logs and the cassette go
	suite       string
	specVersion string
	scenario    string
	upstream    string
	stateless   bool
	noInstall   bool
}

func main() {
	var c config
	flag.StringVar(&c.dir, "dir", "conformance", "the directory of package.json (run from the module root)")
	flag.StringVar(&c.out, "out", "", "directory for the results, logs and cassette (default: a new temporary directory, kept)")
	flag.StringVar(&c.suite, "suite", "all", `the suite's scenario set: "active", "all" or "pending"`)
	flag.StringVar(&c.specVersion, "spec-version", "2025-11-25", "the suite's -spec-version")
	flag.StringVar(&c.scenario, "scenario", "", "run only this scenario")
	flag.StringVar(&c.upstream, "upstream", "", "test the live server at this Streamable HTTP URL instead of the go-sdk's everything server")
	flag.BoolVar(&c.stateless, "stateless", false, "run the everything server in stateless mode")
	flag.BoolVar(&c.noInstall, "no-install", false, "do not run npm ci (node_modules is already installed)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "conformance: no arguments expected")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, c)
	if err != nil && ctx.Err() != nil {
		err = errors.New("interrupted; every process it started is stopped")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) (bool, error) {
	if _, err := os.Stat(filepath.Join(c.dir, "package-lock.json")); err != nil {
		return false, fmt.Errorf("%s/package-lock.json not found: run from the module root (go run ./conformance) or give -dir", c.dir)
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return false, err
	}
	if c.out == "" {
		if c.out, err = os.MkdirTemp("", "mcpmock-conformance-"); err != nil {
			return false, err
		}
	} else if err := os.MkdirAll(c.out, 0o755); err != nil {
		return false, err
	}
	if c.out, err = filepath.Abs(c.out); err != nil {
		return false, err
	}
	fmt.Fprintf(os.Stderr, "conformance: results, logs and the cassette go to %s\n", c.out)

	if !c.noInstall {
		if err := proc.Command(ctx, c.out, "npm-ci.log", "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund"); err != nil {
			return false, fmt.Errorf("npm ci --prefix %s: %w (see %s)", c.dir, err, filepath.Join(c.out, "npm-ci.log"))
		}
	}
	mcpmock := filepath.Join(c.out, "bin", "mcpmock")
	if err := proc.Command(ctx, c.out, "build.log", "go", "build", "-o", mcpmock, "./cmd/mcpmock"); err != nil {
		return false, fmt.Errorf("go build ./cmd/mcpmock: %w", err)
	}

	live := c.upstream
	if live == "" {
		bin := filepath.Join(c.out, "bin", "everything-server")
		if err := proc.Command(ctx, c.out, "build.log", "go", "build", "-o", bin, everythingServer); err != nil {
			return false, fmt.Errorf("go build %s: %w", everythingServer, err)
		}
		addr, err := proc.FreeAddr()
		if err != nil {
			return false, err
		}
		srv, err := proc.Start(filepath.Join(c.out, "everything-server.log"), nil, bin, "-http="+addr, fmt.Sprintf("-stateless=%t", c.stateless))
		if err != nil {
			return false, err
		}
		defer srv.Stop()
		if err := proc.WaitDial(ctx, addr, 15*time.Second); err != nil {
			return false, fmt.Errorf("the everything server: %w (see everything-server.log)", err)
		}
		live = "http://" + addr + "/mcp"
	}

	cassette := filepath.Join(c.out, "cassette.json")
	legs := []string{"live", "tap", "replay"}
	results := map[string]map[string]*scenario{}
	for _, leg := range legs {
		url := live
		var p *proc.Proc
		switch leg {
		case "tap":
			p, url, err = proc.StartMCPMock(ctx, filepath.Join(c.out, leg+"-mcpmock.log"), mcpmock, "record", "-c", cassette, "--upstream", live, "--listen", "127.0.0.1:0")
		case "replay":
			p, url, err = proc.StartMCPMock(ctx, filepath.Join(c.out, leg+"-mcpmock.log"), mcpmock, "replay", "-c", cassette, "--listen", "127.0.0.1:0")
		}
		if err != nil {
			return false, err
		}
		fmt.Fprintf(os.Stderr, "conformance: %s: %s\n", leg, url)
		err = suite(ctx, c, dir, leg, url)
		if p != nil {
			p.Stop()
		}
		if err != nil {
			return false, err
		}
		if results[leg], err = readResults(filepath.Join(c.out, leg)); err != nil {
			return false, err
		}
	}
	return report(os.Stdout, legs, results), nil
}

// suite runs the conformance suite once against url; its results go to
// out/leg, its output to out/leg.log. Failing checks are not an error.
func suite(ctx context.Context, c config, dir, leg, url string) error {
	args := []string{"--import", filepath.Join(dir, "node20.mjs"),
		filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", url, "--suite", c.suite, "--spec-version", c.specVersion, "-o", filepath.Join(c.out, leg)}
	if c.scenario != "" {
		args = append(args, "--scenario", c.scenario)
	}
	err := proc.Command(ctx, c.out, leg+".log", "node", args...)
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() == nil {
		return nil // the suite exits 1 when a check fails
	}
	return err
}

// A scenario is the checks of one scenario: each check id (numbered
// #2, #3… when it repeats) with its status.
type scenario struct {
	status map[string]string
	errors map[string]string
}

func (s *scenario) count(status string) int {
	n := 0
	for _, st := range s.status {
		if st == status {
			n++
		}
	}
	return n
}

var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// readResults reads the checks.json of each scenario the suite wrote under
// dir. INFO checks are left out.
func readResults(dir string) (map[string]*scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("the suite wrote no results: %w", err)
	}
	out := map[string]*scenario{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			return nil, err
		}
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, e.Name(), "checks.json"), err)
		}
		s := &scenario{status: map[string]string{}, errors: map[string]string{}}
		for _, ch := range checks {
			if ch.Status == "INFO" {
				continue
			}
			id := ch.ID
			for n := 2; s.status[id] != ""; n++ {
				id = fmt.Sprintf("%s#%d", ch.ID, n)
			}
			s.status[id] = ch.Status
			s.errors[id] = ch.ErrorMessage
		}
		out[m[1]] = s
	}
	return out, nil
}

// report prints the table and the checks whose status differs from live;
// it reports whether every leg passes every check that passes live.
func report(w io.Writer, legs []string, results map[string]map[string]*scenario) bool {
	var names []string
	for name := range results[legs[0]] {
		names = append(names, name)
	}
	for _, leg := range legs[1:] {
		for name := range results[leg] {
			if results[legs[0]][name] == nil {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	cell := func(s *scenario) string {
		if s == nil {
			return "not run"
		}
		pass, fail, warn := s.count("SUCCESS"), s.count("FAILURE"), s.count("WARNING")
		mark := "pass"
		if fail > 0 {
			mark = "FAIL"
		}
		c := fmt.Sprintf("%s %d/%d", mark, pass, pass+fail)
		if warn > 0 {
			c += fmt.Sprintf(" (%d warn)", warn)
		}
		return c
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(legs, "\t"))
	totals := make([][3]int, len(legs)) // pass, fail, warn
	for _, name := range names {
		row := []string{name}
		for i, leg := range legs {
			s := results[leg][name]
			row = append(row, cell(s))
			if s != nil {
				totals[i][0] += s.count("SUCCESS")
				totals[i][1] += s.count("FAILURE")
				totals[i][2] += s.count("WARNING")
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	row := []string{"total checks passed"}
	for _, t := range totals {
		row = append(row, fmt.Sprintf("%d/%d (%d warn)", t[0], t[0]+t[1], t[2]))
	}
	fmt.Fprintln(tw, strings.Join(row, "\t"))
	tw.Flush()

	ok := true
	for _, leg := range legs[1:] {
		for _, name := range names {
			l, o := results[legs[0]][name], results[leg][name]
			if l == nil {
				continue
			}
			var ids []string
			for id := range l.status {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				got := "missing"
				if o != nil && o.status[id] != "" {
					got = o.status[id]
				}
				if got == l.status[id] {
					continue
				}
				if l.status[id] == "SUCCESS" {
					ok = false
				}
				msg := ""
				if o != nil && o.errors[id] != "" {
					msg = ": " + o.errors[id]
				}
				fmt.Fprintf(w, "%s: %s %s: %s live, %s%s\n", leg, name, id, l.status[id], got, msg)
			}
		}
		if totals[0][0] > 0 && legTotal(results[leg]) < legTotal(results[legs[0]]) {
			ok = false
		}
	}
	return ok
}

func legTotal(r map[string]*scenario) int {
	n := 0
	for _, s := range r {
		n += s.count("SUCCESS")
	}
	return n
}
