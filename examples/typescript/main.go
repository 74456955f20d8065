// Command typescript runs the TypeScript example suite hermetically through
// mcpmock run, as a TypeScript project's CI would, and checks what the run
// says: the official TypeScript SDK client (pinned in package.json and
// package-lock.json, installed with npm ci) against the recorded weather
// server, over Streamable HTTP and stdio; with the rate-limit overlay on top;
// and a suite that passes although one of its calls missed, which the run
// must fail.
//
//	go run ./examples/typescript              # npm ci, then the three runs
//	go run ./examples/typescript -no-install  # node_modules is already there
//
// It needs Node.js (20 or later) and npm, so it is not part of go test;
// .ci/run runs it where they are installed. Run it from the repository's
// root.
package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// scenario is one run of mcpmock run with the suite.
type scenario struct {
	name string
	args []string // of mcpmock run, before "--"
	test []string // the suite's command
	// status is the exit status mcpmock run must end with; failures is how
	// many failed test cases its JUnit file must hold, and misses what one
	// of them must name.
	status, failures int
	misses           string
}

var scenarios = []scenario{
	{
		name: "the suite over HTTP and stdio",
		args: []string{"-c", "../weather/testdata/weather.json"},
		test: []string{"npm", "test"},
	},
	{
		name: "the rate-limit overlay: the client retries",
		args: []string{"-c", "../weather/testdata/weather.json", "--overlay", "../ratelimit/ratelimit.json"},
		test: []string{"node", "--test", "ratelimit.test.mjs"},
	},
	{
		name:     "a suite that passes with a miss fails the run",
		args:     []string{"-c", "../weather/testdata/weather.json"},
		test:     []string{"node", "--test", "miss.test.mjs"},
		status:   1,
		failures: 2, // the cassette and its miss
		misses:   "Paris",
	},
}

func main() {
	noInstall := flag.Bool("no-install", false, "do not run npm ci (node_modules is already installed)")
	flag.Parse()
	if err := run(*noInstall); err != nil {
		fmt.Fprintln(os.Stderr, "typescript:", err)
		os.Exit(1)
	}
}

func run(noInstall bool) error {
	dir, err := filepath.Abs(filepath.Join("examples", "typescript"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		return fmt.Errorf("run it from the repository's root: %w", err)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not on PATH: this harness needs Node.js 20 or later and npm", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if !noInstall {
		if out, err := exec.CommandContext(ctx, "npm", "ci", "--prefix", dir, "--no-audit", "--no-fund").CombinedOutput(); err != nil {
			return fmt.Errorf("npm ci: %w\n%s", err, out)
		}
	}
	tmp, err := os.MkdirTemp("", "mcpmock-typescript-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "mcpmock")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/mcpmock").CombinedOutput(); err != nil {
		return fmt.Errorf("build mcpmock: %w\n%s", err, out)
	}
	failed := 0
	for i, sc := range scenarios {
		junit := filepath.Join(tmp, fmt.Sprintf("junit-%d.xml", i))
		args := append(append([]string{"run", "--junit", junit}, sc.args...), "--")
		cmd := exec.CommandContext(ctx, bin, append(args, sc.test...)...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		status := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			status = ee.ExitCode()
		} else if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		problem := check(sc, status, junit)
		verdict := "ok"
		if problem != "" {
			verdict = "FAIL: " + problem
			failed++
		}
		fmt.Printf("%-50s exit %d  %s\n", sc.name, status, verdict)
		if problem != "" {
			fmt.Printf("  mcpmock %s\n%s\n", strings.Join(cmd.Args[1:], " "), indent(out.String()))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d runs did not end as they must", failed, len(scenarios))
	}
	return nil
}

// check compares a run's status and JUnit file with what the scenario
// says; "" when they agree.
func check(sc scenario, status int, junit string) string {
	if status != sc.status {
		return fmt.Sprintf("exit status %d, want %d", status, sc.status)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		return fmt.Sprintf("no JUnit file: %v", err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return fmt.Sprintf("the JUnit file does not parse: %v", err)
	}
	failures, named := 0, sc.misses == ""
	cases := 0
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			cases++
			if c.Failure != nil {
				failures++
				named = named || strings.Contains(c.Name+c.Failure.Message+c.Failure.Text, sc.misses)
			}
		}
	}
	switch {
	case cases == 0:
		return "the JUnit file has no test case"
	case failures != sc.failures:
		return fmt.Sprintf("the JUnit file has %d failed test cases, want %d", failures, sc.failures)
	case !named:
		return fmt.Sprintf("no failed test case of the JUnit file names %q", sc.misses)
	}
	return ""
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
