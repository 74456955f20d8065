package replayer

import (
	"bufio"
	"encoding/json"
	"io"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

// pendingCalls is how many requests the tests below hold in flight: enough
// that a goroutine each would stand out against the replay's own few.
const pendingCalls = 1000

// servePipes serves the cassette text on pipes the test drives itself.
func servePipes(t *testing.T, text string, opts *Options) (*Engine, io.WriteCloser, *bufio.Reader, chan error) {
	t.Helper()
	e := engineOf(t, text, opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- e.Serve(t.Context(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return e, inW, bufio.NewReader(outR), done
}

// sendCalls writes n calls of tool a in one write and waits until the
// replay has received them all.
func sendCalls(t *testing.T, e *Engine, in io.Writer, n int) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString(callLine(i+1, "a", `{}`) + "\n")
	}
	go io.WriteString(in, b.String())
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats().Messages < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("the replay received %d of %d calls in 10s", e.Stats().Messages, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// readAnswers reads n answer lines and checks each is the recorded "ok".
func readAnswers(t *testing.T, r *bufio.Reader, n int) {
	t.Helper()
	seen := map[float64]bool{}
	for range n {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if got := outcome(m); got != "ok" {
			t.Fatalf("answer %v: %s", m["id"], got)
		}
		seen[m["id"].(float64)] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct answers, want %d", len(seen), n)
	}
}

// growth is how many goroutines more than before the process has.
func growth(before int) int { return runtime.NumGoroutine() - before }

// TestDelayedRequestsHoldNoGoroutine: requests waiting out a scripted delay
// hold a timer each, not a goroutine. A parked goroutine costs every garbage
// collection a scan of its stack: with one a request, N delayed requests
// made each request cost O(N) (178 µs a request at 10,000 pending against
// 45 µs at 1,000, in `go run ./bench -only growth`).
func TestDelayedRequestsHoldNoGoroutine(t *testing.T) {
	before := runtime.NumGoroutine()
	delay := cassettes.Fault{DelayMs: 60000}
	o := &cassettes.Cassette{Version: 1, Interactions: []cassettes.Interaction{{From: cassettes.FromClient,
		Request: json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"a"}}`), Fault: &delay}}}
	e, in, out, done := servePipes(t, cassette(call(1, "a", `{}`, text("ok"))), &Options{Overlays: []*cassettes.Cassette{o}})
	sendCalls(t, e, in, pendingCalls)
	if n := growth(before); n > pendingCalls/10 {
		t.Errorf("%d requests waiting out a delay: %d goroutines more than before, want a few", pendingCalls, n)
	}
	// At the end of the input the waits end and every answer is sent.
	in.Close()
	readAnswers(t, out, pendingCalls)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestWaitingCounts: Options.Waiting is told +1 for each request whose
// answer waits out a delay, -1 once it is answered, and nothing of a
// request answered at once; the command line sizes its memory limit by it.
func TestWaitingCounts(t *testing.T) {
	var mu sync.Mutex
	now, peak, calls := 0, 0, 0
	waiting := func(delta int) {
		mu.Lock()
		defer mu.Unlock()
		now += delta
		peak = max(peak, now)
		calls++
	}
	read := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return now, peak, calls
	}
	delay := cassettes.Fault{DelayMs: 60000}
	o := &cassettes.Cassette{Version: 1, Interactions: []cassettes.Interaction{{From: cassettes.FromClient,
		Request: json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"a"}}`), Fault: &delay}}}
	text := cassette(call(1, "a", `{}`, text("ok")), call(2, "b", `{}`, text("ok")))
	e, in, out, done := servePipes(t, text, &Options{Overlays: []*cassettes.Cassette{o}, Waiting: waiting})
	// Answered at once: not waiting.
	io.WriteString(in, callLine(1, "b", `{}`)+"\n")
	readAnswers(t, out, 1)
	if n, _, c := read(); n != 0 || c != 0 {
		t.Fatalf("after a call answered at once: %d waiting, told %d times; want 0 and 0", n, c)
	}
	const n = 100
	var b strings.Builder
	for i := range n {
		b.WriteString(callLine(i+2, "a", `{}`) + "\n")
	}
	go io.WriteString(in, b.String())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got, _, _ := read()
		if got == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests waiting out a delay (%d messages received): Waiting counts %d", n, e.Stats().Messages-1, got)
		}
	}
	in.Close() // the waits end and every answer is sent
	readAnswers(t, out, n)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, p, c := read(); got != 0 || p != n || c != 2*n {
		t.Errorf("after the answers: %d waiting, at most %d, told %d times; want 0, %d, %d", got, p, c, n, 2*n)
	}
}

// TestSlowClientParksNoSender: while the client reads nothing, the answers
// ready meanwhile are queued behind the one write that waits for it,
// rather than each keeping a goroutine parked on the writer's lock; all of
// them then arrive, in full.
func TestSlowClientParksNoSender(t *testing.T) {
	before := runtime.NumGoroutine()
	e, in, out, done := servePipes(t, cassette(call(1, "a", `{}`, text("ok"))), nil)
	sendCalls(t, e, in, pendingCalls)
	// The answers are planned at once: wait until no more goroutines end.
	n, last := growth(before), -1
	for deadline := time.Now().Add(5 * time.Second); n != last && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		last, n = n, growth(before)
	}
	if n > pendingCalls/10 {
		t.Errorf("%d answers waiting for a client that reads nothing: %d goroutines more than before, want a few", pendingCalls, n)
	}
	readAnswers(t, out, pendingCalls)
	in.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// created is how many goroutines the process has started so far.
func created() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestBatchStartsNoGoroutineAnElement: the elements of a client batch that
// wait for nothing are answered on the goroutine that read the batch. With
// a goroutine each, a batch of N cost every collection N stack scans: 30 µs
// an element at 100,000 against 15 µs at 1,000 (`go run ./bench -only
// growth -growth-only batch`).
func TestBatchStartsNoGoroutineAnElement(t *testing.T) {
	w, _ := serveCassette(t, cassette(`{"from":"client","request":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}},"response":{"from":"server","message":{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}}}`,
		call(1, "a", `{}`, text("ok"))), nil)
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	w.recv()
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	elems := make([]string, pendingCalls)
	for i := range elems {
		elems[i] = callLine(i+1, "a", `{}`)
	}
	before := created()
	w.send("[" + strings.Join(elems, ",") + "]")
	var answers []map[string]any
	select {
	case l := <-w.lines:
		if err := json.Unmarshal([]byte(l), &answers); err != nil {
			t.Fatalf("not a batch answer: %.200s", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no batch answer in 10s")
	}
	if n := created() - before; n > pendingCalls/10 {
		t.Errorf("a batch of %d calls started %d goroutines, want a few", pendingCalls, n)
	}
	if len(answers) != pendingCalls {
		t.Fatalf("%d answers, want %d", len(answers), pendingCalls)
	}
	for _, a := range answers {
		if got := outcome(a); got != "ok" {
			t.Fatalf("answer %v: %s", a["id"], got)
		}
	}
}
