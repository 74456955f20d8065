package recorder

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// Faults of the peers: a server that exits at start, writes garbage or
// hangs; a client that vanishes in the middle of an SSE answer; an upstream
// HTTP server that restarts. The tap stays up, the client is told, and the
// recording keeps what happened and loads.

const initLine = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// stdioTap runs the stdio tap on a server of kind and returns the client's
// ends, the tap's result and the cassette's path.
type stdioRun struct {
	in     *io.PipeWriter // the client's lines to the tap
	out    *bufio.Reader  // the tap's lines to the client
	done   chan error
	status int
	rec    *Recorder
	path   string
}

func startStdioTap(t *testing.T, ctx context.Context, kind string, opts StdioOptions) *stdioRun {
	t.Helper()
	r := &stdioRun{done: make(chan error, 1), path: filepath.Join(t.TempDir(), "c.json")}
	var err error
	if r.rec, err = New(r.path, nil); err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(kind)
	opts.Env = append(opts.Env, env...)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.in, r.out = inW, bufio.NewReader(outR)
	go func() {
		status, err := Stdio(ctx, argv, inR, outW, io.Discard, r.rec, &opts)
		r.status = status
		outW.Close()
		r.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return r
}

// finish waits for the tap and returns its status and the saved cassette.
func (r *stdioRun) finish(t *testing.T) (int, *cassettes.Cassette) {
	t.Helper()
	if err := <-r.done; err != nil {
		t.Fatalf("Stdio: %v", err)
	}
	if err := r.rec.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := cassettes.Load(r.path)
	if err != nil {
		t.Fatalf("the cassette does not load: %v", err)
	}
	return r.status, c
}

func TestStdioTapServerExitsAtStart(t *testing.T) {
	r := startStdioTap(t, testCtx(t), testpeer.ExitAtStart, StdioOptions{})
	go io.WriteString(r.in, initLine+"\n")
	// The client gets EOF, or an error for its request if the tap saw it
	// before the server was gone.
	rest, err := io.ReadAll(r.out)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(rest)); s != "" {
		msg, err := jsonrpc.Parse([]byte(s))
		if err != nil || msg.ID != "0" || msg.Error == nil {
			t.Errorf("the client got %q: want EOF or a JSON-RPC error for id 0", s)
		}
	}
	if err := <-r.done; err != nil {
		t.Fatalf("Stdio: %v", err)
	}
	if err := r.rec.Close(); err != nil {
		t.Fatal(err)
	}
	if r.status != testpeer.ExitAtStartStatus {
		t.Errorf("status %d, want the server's %d", r.status, testpeer.ExitAtStartStatus)
	}
	// No interaction completed: no file is written.
	if _, err := os.Lstat(r.path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a recording in which nothing completed left a file (%v)", err)
	}
}

func TestStdioTapServerWritesGarbage(t *testing.T) {
	r := startStdioTap(t, testCtx(t), testpeer.Garbage, StdioOptions{})
	go io.WriteString(r.in, initLine+"\n")
	for _, want := range testpeer.GarbageLines {
		line, err := r.out.ReadString('\n')
		if err != nil || line != want+"\n" {
			t.Fatalf("the client got %q (%v), want the server's garbage %q unchanged", line, err, want)
		}
	}
	line, err := r.out.ReadString('\n')
	if msg, perr := jsonrpc.Parse([]byte(line)); err != nil || perr != nil || msg.ID != "0" || msg.Result == nil {
		t.Fatalf("after the garbage, %q (%v): want the answer to initialize", line, err)
	}
	r.in.Close()
	tail, err := io.ReadAll(r.out)
	if err != nil || string(tail) != testpeer.GarbageTail {
		t.Errorf("at the end the client got %q (%v), want the last line without its newline %q", tail, err, testpeer.GarbageTail)
	}
	status, c := r.finish(t)
	if status != 0 {
		t.Errorf("status %d", status)
	}
	// JSON text is UTF-8: a byte that is not is kept as U+FFFD.
	for _, want := range append(testpeer.GarbageLines, testpeer.GarbageTail) {
		if !recorded(c, perByteValidUTF8(want)) {
			t.Errorf("%q is not in the cassette", want)
		}
	}
}

// TestStdioTapServerHangs: a server that never answers and does not exit
// when its stdin closes is stopped by the tap: SIGTERM after StopTimeout,
// SIGKILL after another if it ignores SIGTERM; the client's cancel ends it
// the same way, and a client still there gets an error for its call.
func TestStdioTapServerHangs(t *testing.T) {
	const stop = 100 * time.Millisecond
	tests := []struct {
		name   string
		kind   string
		cancel bool // the client cancels instead of closing
		status int
	}{
		{"close/SIGTERM", testpeer.Hang, false, 128 + 15},
		{"close/SIGKILL", testpeer.HangHard, false, 128 + 9},
		{"cancel/SIGTERM", testpeer.Hang, true, 128 + 15},
		{"cancel/SIGKILL", testpeer.HangHard, true, 128 + 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			r := startStdioTap(t, ctx, tt.kind, StdioOptions{StopTimeout: stop})
			if line, err := r.out.ReadString('\n'); err != nil || line != testpeer.HangingLine+"\n" {
				t.Fatalf("the server is not ready: %q %v", line, err)
			}
			if _, err := io.WriteString(r.in, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"); err != nil {
				t.Fatal(err)
			}
			if tt.cancel {
				r.rec.Sync() // the request is seen: it is pending
				cancel()
				line, err := r.out.ReadString('\n')
				if msg, perr := jsonrpc.Parse([]byte(line)); err != nil || perr != nil || msg.ID != "1" || msg.Error == nil {
					t.Errorf("the client still there got %q (%v): want an error for its call", line, err)
				}
			} else {
				r.in.Close()
			}
			status, c := r.finish(t)
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			if !recorded(c, `{"jsonrpc":"2.0","id":1,"method":"ping"}`) {
				t.Error("the unanswered call is not in the cassette")
			}
		})
	}
}

// TestHTTPTapClientVanishesMidStream: the client goes away while an SSE
// answer is streaming. The tap ends the upstream request, records what
// passed, and serves the next client.
func TestHTTPTapClientVanishesMidStream(t *testing.T) {
	upstreamGone := make(chan struct{})
	first := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"ping"`) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":2,"result":{}}`))
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: e1\ndata: "+first+"\n\n")
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(upstreamGone)
	}))
	t.Cleanup(up.Close)
	base, rec := startTap(t, up.URL+"/mcp")

	ctx, cancel := context.WithCancel(testCtx(t))
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"ms":60000},"_meta":{"progressToken":"p"}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(call))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("before the first event: %v", err)
		}
		if strings.HasPrefix(line, "data: ") {
			break
		}
	}
	cancel() // the client vanishes
	resp.Body.Close()
	select {
	case <-upstreamGone:
	case <-testCtx(t).Done():
		t.Fatal("the upstream request goes on after its client has gone")
	}
	// The tap serves the next client.
	resp2, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusOK || !bytes.Contains(b, []byte(`"result"`)) {
		t.Errorf("after the vanished client: %d %s", resp2.StatusCode, b)
	}
	rec.Sync()
	c := rec.Cassette()
	if !recorded(c, call) || !recorded(c, first) {
		t.Errorf("the cassette lacks the call or the event that passed: %+v", c.Interactions)
	}
}

// TestHTTPTapUpstreamRestarts: while the upstream is down each request gets
// a 502 with a JSON-RPC error for it; once it is back the tap forwards
// again.
func TestHTTPTapUpstreamRestarts(t *testing.T) {
	h, err := testpeer.HTTPHandler(testpeer.GoSDK, testpeer.HTTPServerOptions{Stateless: true, JSONResponse: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	serve := func(ln net.Listener) *http.Server {
		s := &http.Server{Handler: h}
		go s.Serve(ln)
		return s
	}
	s := serve(ln)
	base, rec := startTap(t, "http://"+addr+"/mcp")
	ping := func(id string) (int, *jsonrpc.Message) {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		msg, err := jsonrpc.Parse(bytes.TrimSpace(b))
		if err != nil {
			t.Fatalf("ping %s: %d %q is not JSON-RPC", id, resp.StatusCode, b)
		}
		return resp.StatusCode, msg
	}
	if status, msg := ping("1"); status != http.StatusOK || msg.Result == nil {
		t.Fatalf("before the restart: %d %s", status, msg.Raw)
	}
	s.Close()
	for _, id := range []string{"2", "3"} {
		status, msg := ping(id)
		if status != http.StatusBadGateway || msg.Error == nil || string(msg.ID) != id {
			t.Fatalf("while the upstream is down: %d %s, want 502 and a JSON-RPC error for id %s", status, msg.Raw, id)
		}
	}
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	s2 := serve(ln2)
	t.Cleanup(func() { s2.Close() })
	if status, msg := ping("4"); status != http.StatusOK || msg.Result == nil || msg.ID != "4" {
		t.Fatalf("after the restart: %d %s", status, msg.Raw)
	}
	rec.Sync()
	c := rec.Cassette()
	for _, id := range []string{"1", "2", "3", "4"} {
		if !recorded(c, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`) {
			t.Errorf("ping %s is not in the cassette", id)
		}
	}
}

// perByteValidUTF8 replaces each byte of s that is not UTF-8 with U+FFFD,
// as encoding/json does.
func perByteValidUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for a bad byte
		i += n
	}
	return b.String()
}
