package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// The test command of the run tests: the test binary in the role of a test
// suite. runClientEnv holds its steps, separated by commas; each reads the
// variables of the run (MCPMOCK_URL, MCPMOCK_ARGV; a step ending in @NAME
// those of cassette NAME). runClientOut names a file that gets what each
// client saw (a JSON object: step → transcript).
//
//	gosdk-http, mcpgo-http     a scripted client over Streamable HTTP
//	gosdk-stdio, mcpgo-stdio   the same over stdio, spawning MCPMOCK_ARGV
//	hit-stdio, miss-stdio      raw lines: initialize and a call of
//	                           get_weather that matches (New York) or not
//	exit-stdio                 initialize and a call, then the status the
//	                           spawned server exited with, as a step
//	env                        print the MCPMOCK_ variables as JSON on stdout
//	await-signal               print {"ready":true}, wait for SIGTERM or
//	                           SIGINT, and exit 128+its number
//	exit=N                     exit with status N (else 0)
const (
	runClientEnv = "MCPMOCK_TEST_RUN_CLIENT"
	runClientOut = "MCPMOCK_TEST_RUN_OUT"
)

func init() {
	steps := os.Getenv(runClientEnv)
	if steps == "" {
		return
	}
	// What this process spawns (MCPMOCK_ARGV: the test binary as mcpmock)
	// must not be a client again.
	os.Unsetenv(runClientEnv)
	os.Exit(runClient(strings.Split(steps, ",")))
}

func runClient(steps []string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[string]string{}
	status := 0
	for _, step := range steps {
		role, name, _ := strings.Cut(step, "@")
		suffix := ""
		if name != "" {
			suffix = "_" + envSuffix(name)
		}
		url := os.Getenv("MCPMOCK_URL" + suffix)
		var argv []string
		json.Unmarshal([]byte(os.Getenv("MCPMOCK_ARGV"+suffix)), &argv)
		var tr testpeer.Transcript
		var err error
		switch {
		case role == "gosdk-http":
			tr, err = testpeer.RunGoSDKHTTP(ctx, url, testpeer.HTTPOptions{})
		case role == "mcpgo-http":
			tr, err = testpeer.RunMCPGoHTTP(ctx, url, testpeer.HTTPOptions{})
		case role == "gosdk-stdio" || role == "mcpgo-stdio":
			run := testpeer.RunGoSDK
			if role == "mcpgo-stdio" {
				run = testpeer.RunMCPGo
			}
			tr, err = spawned(ctx, argv, func(r io.ReadCloser, w io.WriteCloser) (testpeer.Transcript, error) {
				return run(ctx, r, w, testpeer.ClientOptions{})
			})
		case role == "hit-stdio" || role == "miss-stdio":
			call := weatherHit
			if role == "miss-stdio" {
				call = weatherMiss
			}
			tr, err = spawned(ctx, argv, func(r io.ReadCloser, w io.WriteCloser) (testpeer.Transcript, error) {
				return rawCalls(r, w, initReq, call)
			})
		case role == "exit-stdio":
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			cmd.Stdin = strings.NewReader(initReq + "\n" + weatherHit + "\n")
			cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
			err = cmd.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = nil
			}
			tr = testpeer.Transcript{{Op: "server exit", Result: strconv.Itoa(cmd.ProcessState.ExitCode())}}
		case role == "env":
			vars := map[string]string{}
			for _, kv := range os.Environ() {
				if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MCPMOCK_") && k != runClientOut {
					vars[k] = v
				}
			}
			b, _ := json.Marshal(vars)
			fmt.Println(string(b))
		case role == "await-signal":
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
			fmt.Println(`{"ready":true}`)
			sig := <-ch
			status = 128 + int(sig.(syscall.Signal))
		case strings.HasPrefix(role, "exit="):
			status, err = strconv.Atoi(strings.TrimPrefix(role, "exit="))
		default:
			err = fmt.Errorf("unknown step %q", role)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "run client: %s: %v\n", step, err)
			return 99
		}
		if tr != nil {
			seen[step] = tr.String()
		}
	}
	if out := os.Getenv(runClientOut); out != "" {
		b, _ := json.Marshal(seen)
		if err := os.WriteFile(out, b, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "run client: %v\n", err)
			return 99
		}
	}
	return status
}

// spawned starts argv as a stdio server, runs the client on its pipes and
// waits for the server to exit.
func spawned(ctx context.Context, argv []string, client func(r io.ReadCloser, w io.WriteCloser) (testpeer.Transcript, error)) (testpeer.Transcript, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("no MCPMOCK_ARGV")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	tr, err := client(r, w)
	w.Close()
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = fmt.Errorf("the stdio server %v: %w", argv, werr)
	}
	return tr, err
}

// rawCalls sends each line and reads one answer for each, as a transcript
// of the answers' results or error codes.
func rawCalls(r io.Reader, w io.Writer, lines ...string) (testpeer.Transcript, error) {
	br := bufio.NewReader(r)
	var tr testpeer.Transcript
	for _, l := range lines {
		if _, err := io.WriteString(w, l+"\n"); err != nil {
			return tr, err
		}
		answer, err := br.ReadString('\n')
		if err != nil {
			return tr, fmt.Errorf("no answer to %s: %w", l, err)
		}
		var m struct {
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(answer), &m)
		got := "result"
		if m.Error != nil {
			got = "error " + strconv.Itoa(m.Error.Code)
		}
		tr = append(tr, testpeer.Step{Op: "raw", Result: got})
	}
	return tr, nil
}
