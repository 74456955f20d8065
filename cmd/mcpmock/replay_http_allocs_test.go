package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/httpguard"
	"github.com/mcpmock/mcpmock/replayer"
)

// A replayed call over HTTP, as replay --listen serves it (the lean
// server, the guard, the routes, the handler; the live log off), allocates
// nothing since December 7th, 2026 (44 times on the 6th; then 12, 9 and
// 7). The handler releases a request it answered from the cassette at once
// (httpguard.Release), and the guard's state, the body's buffer, the
// parsed message, the call's outlet and the server's request, header map
// and response serve the next request. docs/performance.md says what went.
// A few allocations are the runtime's, now and then: 300 runs of each era
// read at most 0.018 allocations and 2 bytes a call.
const maxHTTPCallAllocs, maxHTTPCallBytes = 0.05, 200

// echoCassette is an initialize and 64 calls of an echo tool, m0 to m63,
// in the 2025-11-25 era; or, modern, the 64 calls alone as a client of the
// 2026-07-28 era makes them, each with its protocol version in _meta.
func echoCassette(modern bool) *cassettes.Cassette {
	c := cassettes.New()
	add := func(req, resp string) {
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, Request: []byte(req),
			Response: &cassettes.Message{From: cassettes.FromServer, Message: []byte(resp)}})
	}
	if !modern {
		add(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"t","version":"1"}}}`)
	}
	for i := range 64 {
		add(echoCall(modern, i+1, i), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}`, i+1, i))
	}
	return c
}

// echoCall is a call of the echo tool with the text m<text>.
func echoCall(modern bool, id, text int) string {
	meta := ""
	if modern {
		meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}%s}}`, id, text, meta)
}

// TestReplayHTTPCallAllocates counts what the process allocates a call
// while a client that allocates nothing a call (its requests written
// before, its answers read into one buffer) calls a replay over HTTP: in a
// session of the 2025-11-25 era, and stateless in the 2026-07-28 era.
func TestReplayHTTPCallAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	for _, modern := range []bool{false, true} {
		name := "2025-11-25 session"
		if modern {
			name = "2026-07-28 stateless"
		}
		t.Run(name, func(t *testing.T) { httpCallAllocs(t, modern) })
	}
}

// serveLean serves c as replay --listen does (the lean server, the guard,
// the routes, the handler; the live log off) on a loopback port until the
// test ends, and returns its address and a dialer of connections to it.
func serveLean(t *testing.T, c *cassettes.Cassette) (addr string, dial func() net.Conn) {
	eng, err := replayer.New(c, &replayer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	guard := &httpguard.Options{}
	srv := httpguard.LeanServer(replayRoutes(replayHandler(eng, guard)), guard, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), func() net.Conn {
		conn, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
}

func httpCallAllocs(t *testing.T, modern bool) {
	addr, dial := serveLean(t, echoCassette(modern))
	conn := dial()
	br := bufio.NewReaderSize(conn, 64<<10)
	body := make([]byte, 64<<10)
	request := func(sid, msg string) []byte {
		h := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
		switch {
		case modern:
			h += "Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n"
		case sid != "":
			h += "Mcp-Session-Id: " + sid + "\r\nMcp-Protocol-Version: 2025-11-25\r\n"
		}
		return []byte(h + "Content-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg)
	}
	// call sends a request and reads its answer, returning its body and
	// session id (a view of br's buffer: valid until the next call).
	call := func(req []byte) (answer, sid []byte) {
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
		n := -1
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			if len(line) <= 2 {
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n = 0
				for _, d := range bytes.TrimSpace(v) {
					n = n*10 + int(d-'0')
				}
			}
			if v, ok := bytes.CutPrefix(line, []byte("Mcp-Session-Id: ")); ok {
				sid = append(sid, bytes.TrimSpace(v)...)
			}
		}
		if n < 0 {
			t.Fatal("an answer without Content-Length")
		}
		if _, err := io.ReadFull(br, body[:n]); err != nil {
			t.Fatal(err)
		}
		return body[:n], sid
	}
	var sid []byte
	if !modern {
		_, sid = call(request("", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		if len(sid) == 0 {
			t.Fatal("initialize opened no session")
		}
		call(request(string(sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	const calls = 2000
	reqs := make([][]byte, calls)
	for i := range reqs {
		reqs[i] = request(string(sid), echoCall(modern, i+1, i%64))
	}
	perCall, bytesPerCall := allocsPerCall(reqs, func(r []byte) { call(r) })
	last, _ := call(request(string(sid), echoCall(modern, 9999, 5)))
	if !bytes.Contains(last, []byte(`"text":"m5"`)) || !bytes.Contains(last, []byte(`"id":9999`)) {
		t.Fatalf("the last answer is %s, want m5's under id 9999", last)
	}
	t.Logf("%.3f allocations, %.0f bytes a call", perCall, bytesPerCall)
	if perCall >= maxHTTPCallAllocs || bytesPerCall > maxHTTPCallBytes {
		t.Errorf("a replayed call over HTTP allocates %.2f times, %.0f bytes; want none", perCall, bytesPerCall)
	}
}

// allocsPerCall makes the first half of the calls reqs to warm up (pools,
// buffers, the session's tables), then returns what the process allocated
// a call, in allocations and bytes, over the second half.
func allocsPerCall(reqs [][]byte, call func([]byte)) (allocs, bytes float64) {
	for _, r := range reqs[:len(reqs)/2] {
		call(r)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, r := range reqs[len(reqs)/2:] {
		call(r)
	}
	runtime.ReadMemStats(&after)
	n := float64(len(reqs) - len(reqs)/2)
	return float64(after.Mallocs-before.Mallocs) / n, float64(after.TotalAlloc-before.TotalAlloc) / n
}

// TestReplaySSECallAllocates counts what the process allocates a call over
// HTTP+SSE (2024-11-05): a POST to the session's endpoint answered 202,
// the answer an event on the session's stream. It allocates nothing: the
// answer waits in the session's queue for the stream's goroutine as a copy
// in the queue's own buffer, and the plan's memory is used again (17 on
// December 7th, 2026, 20 while a goroutine carried out each plan, however
// immediate, and 1 while the queue held the plan's own bytes).
func TestReplaySSECallAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	host, dial := serveLean(t, echoCassette(false))
	stream, post := dial(), dial()
	sr, pr := bufio.NewReaderSize(stream, 64<<10), bufio.NewReaderSize(post, 4<<10)
	io.WriteString(stream, "GET /sse HTTP/1.1\r\nHost: "+host+"\r\nAccept: text/event-stream\r\n\r\n")
	// data returns the data of the stream's next event (a view of sr's
	// buffer, valid until the next read); chunk sizes and other lines are
	// skipped.
	data := func() []byte {
		for {
			line, err := sr.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				return bytes.TrimSpace(v)
			}
		}
	}
	endpoint := string(data())
	if !strings.Contains(endpoint, "sessionId=") {
		t.Fatalf("the first event names %q, want the endpoint", endpoint)
	}
	if !strings.HasPrefix(endpoint, "/") {
		endpoint = "/" + endpoint // relative to /sse
	}
	request := func(msg string) []byte {
		return []byte("POST " + endpoint + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(msg)) + "\r\n\r\n" + msg)
	}
	// call posts a message, reads the 202, then the answer's event when
	// the message is a request.
	call := func(req []byte, answered bool) []byte {
		if _, err := post.Write(req); err != nil {
			t.Fatal(err)
		}
		status, err := pr.ReadSlice('\n')
		if err != nil || !bytes.Contains(status, []byte(" 202 ")) {
			t.Fatalf("the POST was answered %q (%v), want 202", status, err)
		}
		n := 0
		for {
			line, err := pr.ReadSlice('\n')
			if err != nil {
				t.Fatal(err)
			}
			if len(line) <= 2 {
				break
			}
			if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
				n, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
			}
		}
		pr.Discard(n)
		if !answered {
			return nil
		}
		return data()
	}
	call(request(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), true)
	call(request(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), false)
	const calls = 2000
	reqs := make([][]byte, calls)
	for i := range reqs {
		reqs[i] = request(echoCall(false, i+1, i%64))
	}
	perCall, bytesPerCall := allocsPerCall(reqs, func(r []byte) { call(r, true) })
	last := call(request(echoCall(false, 9999, 5)), true)
	if !bytes.Contains(last, []byte(`"text":"m5"`)) || !bytes.Contains(last, []byte(`"id":9999`)) {
		t.Fatalf("the last answer is %s, want m5's under id 9999", last)
	}
	t.Logf("%.3f allocations, %.0f bytes a call", perCall, bytesPerCall)
	if perCall >= maxHTTPCallAllocs || bytesPerCall > maxHTTPCallBytes {
		t.Errorf("a replayed call over HTTP+SSE allocates %.2f times, %.0f bytes; want none", perCall, bytesPerCall)
	}
}
