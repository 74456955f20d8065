package replayer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/mcpmocktest"
	"github.com/mcpmock/mcpmock/replayer"
)

// This file is the client half of the transcript harness
// (transcript_test.go): one client connection per front end, each putting
// what the server sends, stream by stream, into an inbox.

// The front ends every transcript runs on, in this order.
var transcriptTransports = []string{"stdio", "http", "in-memory"}

// arrival is one message from the server and the stream it came on.
type arrival struct {
	stream string // "stdout", "GET stream", "POST of line 12"
	data   []byte
}

// inbox holds what the server sent and the client has not looked at yet.
type inbox struct {
	mu    sync.Mutex // guards queue and errs
	queue []arrival
	errs  []error       // streams that failed
	wake  chan struct{} // a token when something was added
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) put(a arrival) {
	b.mu.Lock()
	b.queue = append(b.queue, a)
	b.mu.Unlock()
	b.signal()
}

func (b *inbox) fail(err error) {
	b.mu.Lock()
	b.errs = append(b.errs, err)
	b.mu.Unlock()
	b.signal()
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// poll returns the oldest arrival, if there is one, or the first stream
// failure.
func (b *inbox) poll() (arrival, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.errs) > 0 {
		return arrival{}, false, b.errs[0]
	}
	if len(b.queue) == 0 {
		return arrival{}, false, nil
	}
	a := b.queue[0]
	b.queue = b.queue[1:]
	return a, true, nil
}

// next waits for the oldest arrival until ctx ends.
func (b *inbox) next(ctx context.Context) (arrival, error) {
	for {
		if a, ok, err := b.poll(); ok || err != nil {
			return a, err
		}
		select {
		case <-b.wake:
		case <-ctx.Done():
			return arrival{}, ctx.Err()
		}
	}
}

// clientConn is the client end of one session on one front end.
type clientConn interface {
	// send sends one client line (line is its line number, for stream
	// names and errors).
	send(ctx context.Context, line int, msg []byte) error
	// hangUp ends the session and returns once every stream from the
	// server has ended: what they carried is in the inbox.
	hangUp(ctx context.Context) error
}

// dial opens a session on the named front end.
func dial(t testing.TB, transport string, c *cassettes.Cassette, strict bool, box *inbox) clientConn {
	t.Helper()
	newEngine := func() *replayer.Engine {
		e, err := replayer.New(c, &replayer.Options{Strict: strict})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	switch transport {
	case "stdio":
		return dialStdio(t, newEngine(), box)
	case "http":
		e := newEngine()
		h := e.Handler(nil)
		srv := httptest.NewServer(h)
		ctx, cancel := context.WithCancel(context.Background())
		hc := &httpConn{url: srv.URL + "/mcp", client: srv.Client(), box: box, ctx: ctx}
		t.Cleanup(func() {
			cancel()
			hc.wg.Wait()
			h.Close()
			srv.Close()
		})
		return hc
	case "in-memory":
		s := mcpmocktest.NewServerFromCassette(t, c, &mcpmocktest.Options{AllowMisses: true, Strict: strict})
		r, w := s.Conn()
		return startLines(box, "stdout", w, r)
	}
	t.Fatalf("unknown transport %q (want one of %v)", transport, transcriptTransports)
	return nil
}

// dialStdio serves e over a pair of OS pipes, as a stdio server process
// would be.
func dialStdio(t testing.TB, e *replayer.Engine, box *inbox) clientConn {
	t.Helper()
	serverR, clientW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	clientR, serverW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		err := e.Serve(context.Background(), serverR, serverW)
		serverW.Close()
		serverR.Close()
		served <- err
	}()
	lc := startLines(box, "stdout", clientW, clientR)
	lc.served = served
	t.Cleanup(func() {
		clientW.Close()
		<-lc.read
		clientR.Close()
	})
	return lc
}

// lineConn is a newline-delimited client (stdio, in-memory).
type lineConn struct {
	w      io.WriteCloser
	read   chan struct{} // closed when the server's output ended
	served chan error    // stdio: what Serve returned; nil in memory
	box    *inbox
}

func startLines(box *inbox, stream string, w io.WriteCloser, r io.Reader) *lineConn {
	lc := &lineConn{w: w, read: make(chan struct{}), box: box}
	go func() {
		defer close(lc.read)
		lr := jsonrpc.NewLineReader(r, 0)
		for {
			line, err := lr.ReadLine()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
					box.fail(fmt.Errorf("%s: %w", stream, err))
				}
				return
			}
			box.put(arrival{stream: stream, data: bytes.Clone(line)})
		}
	}()
	return lc
}

func (lc *lineConn) send(_ context.Context, _ int, msg []byte) error {
	_, err := lc.w.Write(append(msg, '\n'))
	return err
}

func (lc *lineConn) hangUp(ctx context.Context) error {
	lc.w.Close()
	select {
	case <-lc.read:
	case <-ctx.Done():
		return fmt.Errorf("the server's output did not end after the client closed its input: %w", ctx.Err())
	}
	if lc.served == nil {
		return nil
	}
	if err := <-lc.served; err != nil {
		return fmt.Errorf("Serve: %w", err)
	}
	return nil
}

// httpConn is a Streamable HTTP client: every client line is a POST, read
// as JSON or as an event stream; the GET stream is opened as soon as
// initialize is answered.
type httpConn struct {
	url    string
	client *http.Client
	box    *inbox
	ctx    context.Context // the streams' lifetime: until the test ends
	wg     sync.WaitGroup  // stream readers
	posts  sync.WaitGroup  // readers of the POSTs' answers

	sid, version string // set by initialize's answer
	get          chan struct{}
}

func (hc *httpConn) request(method string, body []byte) *http.Request {
	req, _ := http.NewRequestWithContext(hc.ctx, method, hc.url, bytes.NewReader(body))
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if hc.sid != "" {
		req.Header.Set("Mcp-Session-Id", hc.sid)
	}
	if hc.version != "" {
		req.Header.Set("MCP-Protocol-Version", hc.version)
	}
	return req
}

// send POSTs msg and returns once the server has answered with headers (so
// that the next line goes out after this one arrived); the body is read on
// its own.
func (hc *httpConn) send(ctx context.Context, line int, msg []byte) error {
	var probe struct{ Method string }
	json.Unmarshal(msg, &probe)
	type answer struct {
		resp *http.Response
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := hc.client.Do(hc.request(http.MethodPost, msg))
		done <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		return fmt.Errorf("POST: no answer: %w", ctx.Err())
	}
	if a.err != nil {
		return fmt.Errorf("POST: %w", a.err)
	}
	stream := fmt.Sprintf("POST of line %d", line)
	if probe.Method != "initialize" || hc.get != nil {
		hc.posts.Add(1)
		hc.wg.Go(func() {
			defer hc.posts.Done()
			hc.readBody(stream, a.resp)
		})
		return nil
	}
	// initialize: the session and the version of the lines that follow,
	// then the GET stream for the server's messages of no request.
	hc.sid = a.resp.Header.Get("Mcp-Session-Id")
	var versionSeen bool
	hc.readBody(stream, a.resp, func(data []byte) {
		var m struct {
			Result struct{ ProtocolVersion string } `json:"result"`
		}
		if json.Unmarshal(data, &m) == nil && m.Result.ProtocolVersion != "" && !versionSeen {
			hc.version, versionSeen = m.Result.ProtocolVersion, true
		}
	})
	if hc.sid == "" {
		return nil // a server of no sessions has no GET stream
	}
	resp, err := hc.client.Do(hc.request(http.MethodGet, nil))
	if err != nil {
		return fmt.Errorf("GET stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return fmt.Errorf("GET stream: %s: %q", resp.Status, b)
	}
	hc.get = make(chan struct{})
	hc.wg.Go(func() {
		defer close(hc.get)
		hc.readBody("GET stream", resp)
	})
	return nil
}

// readBody puts the messages of one HTTP answer in the inbox: a JSON body,
// or the data of each event of an event stream. seen, if given, sees each
// message first.
func (hc *httpConn) readBody(stream string, resp *http.Response, seen ...func([]byte)) {
	defer resp.Body.Close()
	put := func(data []byte) {
		for _, f := range seen {
			f(data)
		}
		hc.box.put(arrival{stream: stream, data: data})
	}
	ct := resp.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "text/event-stream"):
		sr := jsonrpc.NewSSEReader(resp.Body, 0)
		for {
			ev, err := sr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && hc.ctx.Err() == nil {
					hc.box.fail(fmt.Errorf("%s: %w", stream, err))
				}
				return
			}
			if ev.HasData() {
				put(ev.Data) // a priming event or a keep-alive has none
			}
		}
	default:
		b, err := io.ReadAll(resp.Body)
		if err != nil && hc.ctx.Err() == nil {
			hc.box.fail(fmt.Errorf("%s: %w", stream, err))
			return
		}
		b = bytes.TrimSpace(b)
		switch {
		case len(b) == 0 && (resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK):
		case json.Valid(b):
			put(b) // a JSON-RPC answer, whatever the status
		default:
			hc.box.fail(fmt.Errorf("%s: %s, not JSON-RPC: %q", stream, resp.Status, b))
		}
	}
}

// hangUp waits for the answer to every POST, as a client that is done
// does, then ends the session with DELETE, which ends the GET stream, and
// waits for every stream. A DELETE sent while an answer is in flight would
// end its stream before the answer: what the server would still have sent
// there would go unseen.
func (hc *httpConn) hangUp(ctx context.Context) error {
	if err := waitFor(ctx, &hc.posts); err != nil {
		return fmt.Errorf("the answers to POSTs did not end: %w", err)
	}
	if hc.sid != "" {
		resp, err := hc.client.Do(hc.request(http.MethodDelete, nil))
		if err != nil {
			return fmt.Errorf("DELETE: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusOK {
			return fmt.Errorf("DELETE: %s", resp.Status)
		}
	}
	if err := waitFor(ctx, &hc.wg); err != nil {
		return fmt.Errorf("streams still open after DELETE: %w", err)
	}
	return nil
}

// waitFor waits for wg until ctx is done.
func waitFor(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
