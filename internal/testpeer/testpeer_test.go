package testpeer

import (
	"bufio"
	"bytes"
	stdcmp "cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	Main()
	os.Exit(m.Run())
}

// wire records the lines that pass between a client and a server.
type wire struct {
	mu       sync.Mutex // guards toServer and toClient
	toServer bytes.Buffer
	toClient bytes.Buffer
}

type teeWriter struct {
	io.WriteCloser
	w   *wire
	buf *bytes.Buffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.w.mu.Lock()
	t.buf.Write(p)
	t.w.mu.Unlock()
	return t.WriteCloser.Write(p)
}

type teeReader struct {
	io.ReadCloser
	w   *wire
	buf *bytes.Buffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.w.mu.Lock()
	t.buf.Write(p[:n])
	t.w.mu.Unlock()
	return n, err
}

// message is the part of a JSON-RPC message the tests look at.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func parseLines(t *testing.T, data []byte) []message {
	t.Helper()
	var msgs []message
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("wire line %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// messages returns what the client sent and what the server sent.
func (w *wire) messages(t *testing.T) (toServer, toClient []message) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	return parseLines(t, w.toServer.Bytes()), parseLines(t, w.toClient.Bytes())
}

// A connector starts a server of a kind and returns the client's ends of the
// connection: r reads what the server sends, w writes to the server. done
// reports how the server ended, once the client has closed its ends.
type connector func(t *testing.T, kind string) (r io.ReadCloser, w io.WriteCloser, done func() error)

// inProcess runs the server with Serve over io.Pipes.
func inProcess(t *testing.T, kind string) (io.ReadCloser, io.WriteCloser, func() error) {
	t.Helper()
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- Serve(t.Context(), kind, toServerR, toClientW) }()
	var once sync.Once
	var err error
	done := func() error {
		once.Do(func() { err = <-errc })
		return err
	}
	t.Cleanup(func() {
		toServerW.Close()
		toClientR.Close()
		done()
	})
	return toClientR, toServerW, done
}

// child runs the server as a child process of this test binary over OS pipes.
func child(t *testing.T, kind string) (io.ReadCloser, io.WriteCloser, func() error) {
	t.Helper()
	argv, env := Command(kind)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var werr error
	done := func() error {
		once.Do(func() { werr = cmd.Wait() })
		return werr
	}
	t.Cleanup(func() {
		w.Close()
		if err := done(); err != nil && !t.Failed() {
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != crashExitStatus {
				t.Errorf("server %s: %v; stderr:\n%s", kind, err, stderr.String())
			}
		}
	})
	return r, w, done
}

var connectors = []struct {
	name    string
	connect connector
}{
	{"inprocess", inProcess},
	{"child", child},
}

type runner func(context.Context, io.ReadCloser, io.WriteCloser, ClientOptions) (Transcript, error)

var clients = []struct {
	name string
	run  runner
}{
	{"gosdk", RunGoSDK},
	{"mcpgo", RunMCPGo},
}

// wantCalls is what every server answers to the script's tools/call
// requests, but for the last one (the unknown tool), whose message differs.
var wantCalls = Transcript{
	{Op: `tools/call get_weather {"location":"New York"}`, Result: `text "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"`},
	{Op: `tools/call get_weather {"location":"Atlantis"}`, Result: `text "Failed to fetch weather data: API rate limit exceeded"; isError`},
	{Op: `tools/call echo {"text":"héllo 🌍"}`, Result: `text "héllo 🌍"; structured {"echo":"héllo 🌍"}`},
	{Op: `tools/call image {}`, Result: `image image/png 73 bytes`},
	{Op: `tools/call audio {}`, Result: `audio audio/wav 52 bytes`},
	{Op: `tools/call resource {}`, Result: `resource file:///demo.txt text/plain "hello"`},
	{Op: `tools/call add {"a":2,"b":40}`, Result: `text "42"`},
	{Op: `tools/call get_weather {"location":"New York"}`, Result: `text "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"`},
}

var allTools = "add, audio, crash, echo, get_weather, image, progress, resource, slow"

func TestScript(t *testing.T) {
	for _, kind := range Kinds {
		for _, version := range []string{"", "2025-11-25"} {
			for _, conn := range connectors {
				name := kind + "/" + conn.name + "/" + stdcmp.Or(version, "default")
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					got := make(map[string]Transcript)
					for _, c := range clients {
						var w wire
						r, wr, done := conn.connect(t, kind)
						tr, err := c.run(t.Context(),
							teeReader{r, &w, &w.toClient}, teeWriter{wr, &w, &w.toServer},
							ClientOptions{ProtocolVersion: version})
						if err != nil {
							t.Fatalf("%s client: %v\ntranscript so far:\n%s", c.name, err, tr)
						}
						if err := done(); err != nil {
							t.Errorf("%s client: server: %v", c.name, err)
						}
						got[c.name] = tr
						checkTranscript(t, c.name, tr)
						checkEra(t, c.name, kind, version, &w)
					}
					if diff := cmp.Diff(got["gosdk"], got["mcpgo"]); diff != "" {
						t.Errorf("go-sdk and mcp-go clients saw different sessions (-gosdk +mcpgo):\n%s", diff)
					}
				})
			}
		}
	}
}

// checkTranscript checks the parts of a transcript that do not depend on the
// server: all tools listed, the calls' results, a protocol error last.
func checkTranscript(t *testing.T, client string, tr Transcript) {
	t.Helper()
	var names []string
	i := 0
	for ; i < len(tr) && strings.HasPrefix(tr[i].Op, "tools/list"); i++ {
		if tr[i].Error != "" {
			t.Errorf("%s client: %s: %s", client, tr[i].Op, tr[i].Error)
		}
		if tr[i].Result != "" {
			names = append(names, strings.Split(tr[i].Result, ", ")...)
		}
	}
	if i < 3 {
		t.Errorf("%s client: %d pages of tools/list, want at least 3:\n%s", client, i, tr)
	}
	if got := pageResult(names); got != allTools {
		t.Errorf("%s client: tools over all pages = %s, want %s", client, got, allTools)
	}
	calls := tr[i:]
	if len(calls) != len(wantCalls)+1 {
		t.Fatalf("%s client: %d calls, want %d:\n%s", client, len(calls), len(wantCalls)+1, tr)
	}
	if diff := cmp.Diff(wantCalls, calls[:len(wantCalls)]); diff != "" {
		t.Errorf("%s client: calls (-want +got):\n%s", client, diff)
	}
	last := calls[len(calls)-1]
	if last.Op != `tools/call no_such_tool {}` || !strings.HasPrefix(last.Error, "code -32602: ") {
		t.Errorf("%s client: unknown tool gave %+v, want a -32602 protocol error", client, last)
	}
}

// checkEra checks the handshake on the wire: a default client probes with
// server/discover and, against the legacy server only, falls back to
// initialize after a -32601; a pinned client sends initialize only.
func checkEra(t *testing.T, client, kind, version string, w *wire) {
	t.Helper()
	toServer, toClient := w.messages(t)
	var methods []string
	discoverID := ""
	for _, m := range toServer {
		if m.Method == "" {
			continue
		}
		methods = append(methods, m.Method)
		if m.Method == methodDiscover {
			discoverID = string(m.ID)
		}
	}
	idx := func(method string) int {
		for i, m := range methods {
			if m == method {
				return i
			}
		}
		return -1
	}
	discover, initialize := idx(methodDiscover), idx("initialize")
	switch {
	case version != "":
		if discover >= 0 || initialize != 0 {
			t.Errorf("%s client pinned to %s sent %q, want initialize first and no %s", client, version, methods, methodDiscover)
		}
	case kind == GoSDKLegacy:
		if discover != 0 || initialize != 1 {
			t.Errorf("%s client against %s sent %q, want %s then initialize", client, kind, methods, methodDiscover)
		}
		refused := false
		for _, m := range toClient {
			if string(m.ID) == discoverID && m.Error != nil && m.Error.Code == -32601 {
				refused = true
			}
		}
		if !refused {
			t.Errorf("%s client against %s: server/discover (id %s) was not refused with -32601", client, kind, discoverID)
		}
	default:
		if discover != 0 || initialize >= 0 {
			t.Errorf("%s client against %s sent %q, want %s first and no initialize", client, kind, methods, methodDiscover)
		}
	}
}

func TestCrash(t *testing.T) {
	for _, kind := range Kinds {
		for _, conn := range connectors {
			t.Run(kind+"/"+conn.name+"/gosdk", func(t *testing.T) {
				t.Parallel()
				r, w, done := conn.connect(t, kind)
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "crash-test", Version: "1"}, nil).
					Connect(t.Context(), &mcp.IOTransport{Reader: r, Writer: w}, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: toolCrash})
				if err == nil {
					t.Fatalf("crash answered %+v, want an error", res)
				}
				checkCrashed(t, conn.name, done)
			})
			t.Run(kind+"/"+conn.name+"/mcpgo", func(t *testing.T) {
				t.Parallel()
				r, w, done := conn.connect(t, kind)
				defer r.Close()
				c := mcpgoclient.NewClient(mcpgotransport.NewIO(r, w, nil))
				defer c.Close()
				if err := c.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Initialize(t.Context(), mcpgo.InitializeRequest{}); err != nil {
					t.Fatal(err)
				}
				var req mcpgo.CallToolRequest
				req.Params.Name = toolCrash
				res, err := c.CallTool(t.Context(), req)
				if err == nil {
					t.Fatalf("crash answered %+v, want an error", res)
				}
				checkCrashed(t, conn.name, done)
			})
		}
	}
}

// checkCrashed checks that a child server exited with the crash status, and
// that an in-process server returned.
func checkCrashed(t *testing.T, conn string, done func() error) {
	t.Helper()
	err := done()
	if conn != "child" {
		return
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != crashExitStatus {
		t.Errorf("server exit: %v, want exit status %d", err, crashExitStatus)
	}
}
