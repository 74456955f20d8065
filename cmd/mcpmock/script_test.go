package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// TestScript runs the CLI contract of DESIGN.md ("Command line": every
// subcommand, its flags, outputs, error messages and exit codes) as the
// scripts in testdata/script, one per subcommand or contract area, with
// their cassettes inside the txtar files. The scripts run the real program:
// "mcpmock", "testpeer KIND" and "mcpclient VAR FILE" are commands on $PATH
// that are this test binary (scriptCommands, installed by testscript.Main
// in TestMain).
//
// Besides the commands of testscript, the scripts have (the HTTP ones in
// script_http_test.go):
//
//	exitcode N CMD [ARG...]
//		Run CMD like exec (stdin from the stdin command; stdout and
//		stderr for the stdout, stderr and cmp commands) and fail unless
//		it exits with status N. exec only tells zero from non-zero; the
//		contract tells 1 (a failure) from 2 (a usage error).
//	rpc [-exit N] FILE CMD [ARG...]
//		A JSON-RPC client on CMD's stdio: send the lines of FILE one at a
//		time, and after each request (a line with "method" and "id") wait
//		up to 20 seconds for the line that answers it; then close CMD's
//		stdin and wait for CMD to exit. Every line CMD wrote is on stdout,
//		its stderr on stderr. Empty lines and lines that start with #
//		are not sent. CMD must exit with status N (default 0; with !, any
//		status but 0).
//	listen NAME CMD [ARG...]
//		Start CMD in the background (stdin at its end, so that a CMD
//		that reads it ends at once) and wait up to 20 seconds for the
//		line "mcpmock: listening on URL" on its stderr; set $NAME to the
//		URL and ${NAME}_BASE to the URL without its path. The end of
//		the script kills what terminate did not end.
//	terminate [-exit N] [-signal INT|TERM] NAME
//		Send the process of listen NAME the signal (default TERM), wait
//		up to 20 seconds for it to exit, and fail unless its status is N
//		(default 0). Its stdout and stderr are then stdout and stderr.
//	httprpc URL FILE
//		A Streamable HTTP client: POST each line of FILE to URL (with
//		the session id and protocol version that the initialize answer
//		gave) and write each JSON-RPC message of the answer, JSON or SSE,
//		on a line of stdout; an answer that is not 2xx is the line
//		"http STATUS BODY". A 202 writes nothing.
//	sserpc URL FILE
//		An HTTP+SSE (2024-11-05) client: GET URL for the event stream,
//		POST each line of FILE to the endpoint its first event names,
//		and after each request wait up to 20 seconds for the event that
//		answers it; every message of the stream goes on a line of stdout.
//
// and the conditions [gap:NAME], true while NAME is a known disagreement
// between the binary and DESIGN.md (knownGaps). A script line that states
// the contract where the binary disagrees carries a comment starting
// "# contract:" and the condition [!gap:NAME]; beside it, a [gap:NAME] line
// states what the binary does today, so that the change that closes the
// gap fails that line and deletes NAME from knownGaps, and the contract
// lines run from then on. An unknown NAME is an error, a gap that no
// script uses fails TestScript, and every gap met is in the test's log.
// MCPMOCK_CONTRACT=strict treats every gap as closed, to see which contract
// lines still fail:
//
//	MCPMOCK_CONTRACT=strict go test -run TestScript ./cmd/mcpmock
func TestScript(t *testing.T) {
	strict := os.Getenv("MCPMOCK_CONTRACT") == "strict"
	var mu sync.Mutex // guards used
	used := map[string]bool{}
	// After every script (they run in parallel, after this function
	// returns): every gap is visible, named in the log, and used by a
	// script when -run selected every script.
	t.Cleanup(func() {
		if t.Failed() || strict {
			return
		}
		all := !strings.Contains(flag.Lookup("test.run").Value.String(), "/")
		mu.Lock()
		defer mu.Unlock()
		for _, name := range slices.Sorted(maps.Keys(knownGaps)) {
			switch {
			case used[name]:
				t.Logf("contract gap %s: %s", name, knownGaps[name])
			case all:
				t.Errorf("gap %q of knownGaps is used by no script: delete it, or test it", name)
			}
		}
	})
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitcode,
			"rpc":       cmdRPC,
			"listen":    cmdListen,
			"terminate": cmdTerminate,
			"httprpc":   cmdHTTPRPC,
			"sserpc":    cmdSSERPC,
		},
		Condition: func(cond string) (bool, error) {
			name, ok := strings.CutPrefix(cond, "gap:")
			if !ok {
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			if _, ok := knownGaps[name]; !ok {
				return false, fmt.Errorf("gap %q is not in knownGaps (script_test.go)", name)
			}
			mu.Lock()
			used[name] = true
			mu.Unlock()
			return !strict, nil
		},
		Setup: func(env *testscript.Env) error {
			if os.Getenv("GORACE") == "" {
				// A -race binary sleeps a second at exit by default: one a
				// command the scripts run.
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			var names []string
			for _, kv := range env.Vars {
				if name, _, ok := strings.Cut(kv, "="); ok && !slices.Contains(names, name) {
					names = append(names, name)
				}
			}
			env.Values[envNames{}] = names
			env.Values[listeners{}] = map[string]*background{}
			return nil
		},
	})
}

// knownGaps are the places where the binary disagrees with the "Command
// line" of DESIGN.md, by the name the scripts use in [gap:NAME]: what the
// contract says, and what the binary does instead.
var knownGaps = map[string]string{}

// scriptCommands are the programs this test binary can be, by the name a
// script or start runs it by (testscript.Main, TestMain).
func scriptCommands() map[string]func() {
	return map[string]func(){
		"mcpmock": main,
		// mcpclient VAR FILE: the client of httprpc, as a program, for
		// the commands that mcpmock run starts: it POSTs the lines of
		// FILE to the URL in $VAR and prints the answers.
		"mcpclient": func() {
			if len(os.Args) != 3 || os.Getenv(os.Args[1]) == "" {
				fmt.Fprintln(os.Stderr, "usage: mcpclient VAR FILE (with the URL in $VAR)")
				os.Exit(2)
			}
			lines, err := os.ReadFile(os.Args[2])
			if err == nil {
				err = postLines(os.Getenv(os.Args[1]), string(lines), os.Stdout)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "mcpclient: %v\n", err)
				os.Exit(1)
			}
			os.Exit(0)
		},
		// testpeer KIND: a test server of internal/testpeer on stdio.
		"testpeer": func() {
			if len(os.Args) != 2 {
				fmt.Fprintf(os.Stderr, "usage: testpeer KIND (one of %q)\n", testpeer.Kinds)
				os.Exit(2)
			}
			os.Setenv(testpeer.EnvVar, os.Args[1])
			testpeer.Main()
			fmt.Fprintf(os.Stderr, "testpeer: no server kind %q\n", os.Args[1])
			os.Exit(2)
		},
	}
}

// exitStatusOf is the exit status in an error of exec, or -1 when the
// command did not run to an exit.
func scriptExitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: status %q is not a number", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	if got := scriptExitStatus(err); got != want {
		ts.Fatalf("%s exited with %v, want status %d", args[1], err, want)
	}
}

// pipeDelay is how long Wait waits for the end of the output of a process
// that has exited (a process it started may still hold a pipe).
const pipeDelay = 10 * time.Second

// rpcAnswerTimeout is how long rpc waits for an answer, and for the end of
// the process after its stdin closed.
const rpcAnswerTimeout = 20 * time.Second

func cmdRPC(ts *testscript.TestScript, neg bool, args []string) {
	want := 0
	if len(args) > 1 && args[0] == "-exit" {
		n, err := strconv.Atoi(args[1])
		if err != nil || neg {
			ts.Fatalf("usage: rpc [-exit N] FILE CMD [ARG...] (and no ! with -exit)")
		}
		want, args = n, args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("usage: rpc [-exit N] FILE CMD [ARG...]")
	}
	var sends []string
	for line := range strings.Lines(ts.ReadFile(args[0])) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			sends = append(sends, line)
		}
	}
	path, err := exec.LookPath(args[1])
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts)
	stdin, err := cmd.StdinPipe()
	ts.Check(err)
	outR, outW, err := os.Pipe()
	ts.Check(err)
	defer outR.Close()
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = outW, &stderr
	cmd.WaitDelay = pipeDelay
	err = cmd.Start()
	outW.Close()
	ts.Check(err)
	exited := make(chan struct{}) // closed when waitErr is set
	var waitErr error
	go func() {
		defer close(exited)
		waitErr = cmd.Wait()
	}()
	// One reader owns stdout: every line goes to lines, which closes at
	// the end of stdout; done stops it when this command ends first.
	lines, done := make(chan string), make(chan struct{})
	go func() {
		defer close(lines)
		r := bufio.NewReader(outR)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				select {
				case lines <- l:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var out strings.Builder
	defer func() {
		close(done)
		cmd.Process.Kill()
		<-exited
		ts.Stdout().Write([]byte(out.String()))
		ts.Stderr().Write([]byte(stderr.String()))
	}()

	for _, line := range sends {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			ts.Fatalf("rpc: send %s: %v", line, err)
		}
		id, ok := requestID(line)
		if !ok {
			continue
		}
		timeout := time.After(rpcAnswerTimeout)
		for answered := false; !answered; {
			select {
			case l, ok := <-lines:
				if !ok {
					select {
					case <-exited:
						ts.Fatalf("rpc: %s exited (%v) before it answered %s", args[1], waitErr, line)
					case <-time.After(pipeDelay):
						ts.Fatalf("rpc: %s closed its stdout before it answered %s", args[1], line)
					}
				}
				out.WriteString(l)
				answered = isAnswer(l, id)
			case <-timeout:
				ts.Fatalf("rpc: no answer to %s within %v", line, rpcAnswerTimeout)
			}
		}
	}
	stdin.Close()
	select {
	case <-exited:
	case <-time.After(rpcAnswerTimeout):
		ts.Fatalf("rpc: %s did not exit within %v of the end of its stdin", args[1], rpcAnswerTimeout)
	}
	// What it wrote after the last answer, up to the end of its stdout.
	drain := time.After(rpcAnswerTimeout)
	for open := true; open; {
		select {
		case l, ok := <-lines:
			out.WriteString(l)
			open = ok
		case <-drain:
			ts.Fatalf("rpc: %s exited, but its stdout was still open %v later", args[1], rpcAnswerTimeout)
		}
	}
	werr := waitErr
	got := scriptExitStatus(werr)
	switch {
	case neg && got == 0:
		ts.Fatalf("rpc: %s exited with status 0, want a failure", args[1])
	case !neg && got != want:
		ts.Fatalf("rpc: %s exited with %v, want status %d", args[1], werr, want)
	}
}

// requestID is the id of a JSON-RPC request line, as JSON text.
func requestID(line string) (string, bool) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return "", false
	}
	return string(m.ID), true
}

// isAnswer reports whether line is the response to the request with id.
func isAnswer(line, id string) bool {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	return json.Unmarshal([]byte(line), &m) == nil && m.Method == "" && string(m.ID) == id
}

// envNames is the key of ts.Value that holds the names of the variables
// the script starts with (Setup).
type envNames struct{}

// scriptEnv is the environment a script gives the commands it runs (as exec
// does): its variables, with the values they have now. A variable that
// the script's env command adds is not in it.
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, name := range ts.Value(envNames{}).([]string) {
		env = append(env, name+"="+ts.Getenv(name))
	}
	return env
}
