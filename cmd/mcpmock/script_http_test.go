package main

// The commands of the scripts for mcpmock's HTTP side (TestScript):
// listen and terminate for a --listen process, httprpc and sserpc for its
// clients.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcpmock/mcpmock/internal/mcp"
)

// listeners is the key of ts.Value that holds the processes of listen, by
// name.
type listeners struct{}

// background is a process that listen started.
type background struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	// exited is closed when the process has exited (waitErr is then set)
	// and its output copied.
	exited  chan struct{}
	waitErr error
}

// listenTimeout is how long listen waits for the URL line and terminate for the
// end of the process.
const listenTimeout = 20 * time.Second

var listeningURL = regexp.MustCompile(`(?m)^mcpmock: listening on (http://[^/\s]+(/\S*))$`)

func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: listen NAME CMD [ARG...]")
	}
	procs := ts.Value(listeners{}).(map[string]*background)
	name := args[0]
	if procs[name] != nil {
		ts.Fatalf("listen: %s is already running", name)
	}
	path, err := exec.LookPath(args[1])
	ts.Check(err)
	b := &background{cmd: exec.Command(path, args[2:]...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	b.cmd.Dir, b.cmd.Env = ts.MkAbs("."), scriptEnv(ts)
	// Not *os.Files: os/exec copies them, and Wait returns when both are
	// at their end.
	b.cmd.Stdout, b.cmd.Stderr = b.stdout, b.stderr
	b.cmd.WaitDelay = pipeDelay
	ts.Check(b.cmd.Start())
	procs[name] = b
	go func() {
		defer close(b.exited)
		b.waitErr = b.cmd.Wait()
	}()
	ts.Defer(func() {
		b.cmd.Process.Kill()
		<-b.exited
	})
	timeout := time.After(listenTimeout)
	for {
		text, changed := b.stderr.next()
		if m := listeningURL.FindStringSubmatch(text); m != nil {
			ts.Setenv(name, m[1])
			ts.Setenv(name+"_BASE", m[1][:len(m[1])-len(m[2])])
			return
		}
		select {
		case <-changed:
		case <-b.exited:
			ts.Fatalf("listen: %s exited (%v) without the line \"mcpmock: listening on URL\"; stderr:\n%s", args[1], b.waitErr, b.stderr)
		case <-timeout:
			ts.Fatalf("listen: no line \"mcpmock: listening on URL\" within %v; stderr:\n%s", listenTimeout, b.stderr)
		}
	}
}

func cmdTerminate(ts *testscript.TestScript, neg bool, args []string) {
	want, sig := 0, os.Signal(syscall.SIGTERM)
	for len(args) > 2 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-exit":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			want = n
		case "-signal":
			switch args[1] {
			case "INT":
				sig = os.Interrupt
			case "TERM":
			default:
				ts.Fatalf("terminate: signal %q is not INT or TERM", args[1])
			}
		default:
			ts.Fatalf("terminate: unknown flag %s", args[0])
		}
		args = args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: terminate [-exit N] [-signal INT|TERM] NAME")
	}
	procs := ts.Value(listeners{}).(map[string]*background)
	b := procs[args[0]]
	if b == nil {
		ts.Fatalf("terminate: no listen %s", args[0])
	}
	delete(procs, args[0])
	ts.Check(b.cmd.Process.Signal(sig))
	select {
	case <-b.exited:
	case <-time.After(listenTimeout):
		ts.Fatalf("terminate: %s did not exit within %v of the signal; stderr:\n%s", args[0], listenTimeout, b.stderr)
	}
	ts.Stdout().Write([]byte(b.stdout.String()))
	ts.Stderr().Write([]byte(b.stderr.String()))
	if got := scriptExitStatus(b.waitErr); got != want {
		ts.Fatalf("terminate: %s exited with %v, want status %d", args[0], b.waitErr, want)
	}
}

func cmdHTTPRPC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httprpc URL FILE")
	}
	if err := postLines(args[0], ts.ReadFile(args[1]), ts.Stdout()); err != nil {
		ts.Fatalf("httprpc: %v", err)
	}
}

// postLines is the client of httprpc and of the mcpclient command: it
// POSTs each line of lines to url, in one session, and writes the answers
// to out.
func postLines(url, lines string, out io.Writer) error {
	var session, version string
	for line := range strings.Lines(lines) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(line))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set(mcp.HeaderSessionID, session)
		}
		if version != "" {
			req.Header.Set(mcp.HeaderProtocolVersion, version)
		}
		ctx, cancel := context.WithTimeout(context.Background(), rpcAnswerTimeout)
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			cancel()
			return fmt.Errorf("%s: %w", line, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", line, err)
		}
		if id := resp.Header.Get(mcp.HeaderSessionID); id != "" {
			session = id
		}
		switch {
		case resp.StatusCode == http.StatusAccepted:
			continue
		case resp.StatusCode/100 != 2:
			fmt.Fprintf(out, "http %d %s\n", resp.StatusCode, bytes.TrimSpace(body))
			continue
		}
		var msgs [][]byte
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			for l := range bytes.Lines(body) {
				if data, ok := bytes.CutPrefix(bytes.TrimRight(l, "\r\n"), []byte("data:")); ok {
					msgs = append(msgs, bytes.TrimSpace(data))
				}
			}
		} else {
			msgs = append(msgs, bytes.TrimSpace(body))
		}
		for _, m := range msgs {
			var r struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if json.Unmarshal(m, &r) == nil && r.Result.ProtocolVersion != "" {
				version = r.Result.ProtocolVersion
			}
			fmt.Fprintf(out, "%s\n", m)
		}
	}
	return nil
}

func cmdSSERPC(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: sserpc URL FILE")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	ts.Check(err)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	ts.Check(err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		ts.Fatalf("sserpc: GET %s: %s", args[0], resp.Status)
	}
	// One reader owns the stream: each event as name and data.
	type event struct{ name, data string }
	events, done := make(chan event), make(chan struct{})
	defer close(done)
	go func() {
		defer close(events)
		r := bufio.NewReader(resp.Body)
		var ev event
		for {
			l, err := r.ReadString('\n')
			l = strings.TrimRight(l, "\r\n")
			switch {
			case strings.HasPrefix(l, "event:"):
				ev.name = strings.TrimSpace(l[len("event:"):])
			case strings.HasPrefix(l, "data:"):
				ev.data += strings.TrimSpace(l[len("data:"):])
			case l == "" && ev.data != "":
				select {
				case events <- ev:
				case <-done:
					return
				}
				ev = event{}
			}
			if err != nil {
				return
			}
		}
	}()
	next := func(what string) event {
		select {
		case ev, ok := <-events:
			if !ok {
				ts.Fatalf("sserpc: the stream ended before %s", what)
			}
			return ev
		case <-time.After(rpcAnswerTimeout):
			ts.Fatalf("sserpc: no %s within %v", what, rpcAnswerTimeout)
		}
		panic("unreachable")
	}
	ev := next("endpoint event")
	if ev.name != "endpoint" {
		ts.Fatalf("sserpc: the first event is %q, want endpoint", ev.name)
	}
	endpoint, err := resp.Request.URL.Parse(ev.data)
	ts.Check(err)
	out := ts.Stdout()
	for line := range strings.Lines(ts.ReadFile(args[1])) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		post, err := http.Post(endpoint.String(), "application/json", strings.NewReader(line))
		ts.Check(err)
		io.Copy(io.Discard, post.Body)
		post.Body.Close()
		if post.StatusCode/100 != 2 {
			ts.Fatalf("sserpc: POST %s: %s", line, post.Status)
		}
		id, ok := requestID(line)
		for ok {
			ev := next("answer to " + line)
			fmt.Fprintln(out, ev.data)
			ok = !isAnswer(ev.data, id)
		}
	}
}
