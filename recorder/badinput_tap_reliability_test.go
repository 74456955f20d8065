package recorder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/internal/testpeer"
)

// The bad-input catalogue of DESIGN.md thrown through the taps. A tap is
// transparent: it passes each bad input to the server unchanged and the
// server's answer back unchanged, records it (as raw text when it is not
// JSON-RPC), never crashes, and a real client's session beside it goes on
// as if the bad input were not there.

// tapCase is one bad input. The ids of the catalogue are never integers:
// the real client's are, and that tells their answers apart.
type tapCase struct {
	name string
	line string
}

// bigCall is an echo call whose line is past n bytes.
func bigCall(id string, n int) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("a", n) + `"}}}`
}

func tapCatalogue() []tapCase {
	cases := []tapCase{
		{"malformed JSON", `{"jsonrpc":"2.0","id":"b1","method":`},
		{"invalid request: no method", `{"jsonrpc":"2.0","id":"b2"}`},
		{"invalid request: not an object", `42`},
		{"binary garbage", "\x00\x01\x02\xfe\xff garbage \x1b[31m"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"b3\",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\xfe\"}}}"},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":"b4","method":"ping"}`},
		{"no jsonrpc member", `{"id":"b5","method":"ping"}`},
		{"id of the wrong type: object", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`},
		{"id of the wrong type: bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`},
		{"a response to nothing", `{"jsonrpc":"2.0","id":"b77","result":{}}`},
		{"an error response to nothing", `{"jsonrpc":"2.0","id":"b78","error":{"code":1,"message":"x"}}`},
		{"a duplicate in-flight id (1)", `{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}}`},
		{"a duplicate in-flight id (2)", `{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"echo","arguments":{"text":"two"}}}`},
		{"a batch of requests", `[{"jsonrpc":"2.0","id":"b10","method":"ping"},{"jsonrpc":"2.0","id":"b11","method":"nope"}]`},
		{"an empty batch", `[]`},
		{"a batch of garbage", `[1,2]`},
		{"a line of 4 MiB", bigCall("big", 4<<20)},
	}
	if *soak {
		cases = append(cases, tapCase{"a line of 64 MiB", bigCall("huge", 64<<20)})
	}
	return cases
}

// tapRecordLimit is the longest message the taps of these tests record: 1
// MiB, so that the line of 4 MiB passes whole and is recorded as a note of
// its length, without seconds of redaction over megabytes under -race; the
// default (64 MiB) under -soak: the same code.
func tapRecordLimit() int {
	if *soak {
		return 0
	}
	return 1 << 20
}

// lastLine is written last, with no newline after it.
const lastLine = `{"jsonrpc":"2.0","id":"last","method":"ping"}`

// forClient reports whether a line from the server belongs to the real
// client: a response with an integer id, or a message from the server with
// a method.
func forClient(line []byte) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	if m.Method != "" {
		return true
	}
	var n int64
	return len(m.ID) > 0 && string(m.ID) != "null" && json.Unmarshal(m.ID, &n) == nil
}

// recorded reports whether the cassette holds a message (or raw line) equal
// to s.
func recorded(c *cassettes.Cassette, s string) bool {
	eq := func(raw json.RawMessage, str *string) bool {
		return (raw != nil && bytes.Equal(bytes.TrimSpace(raw), []byte(s))) || (str != nil && *str == s)
	}
	for _, in := range c.Interactions {
		if eq(in.Request, nil) || eq(in.Notification, nil) || eq(nil, in.Raw) {
			return true
		}
		if in.Response != nil && eq(in.Response.Message, in.Response.Raw) {
			return true
		}
		for _, m := range in.Exchange {
			if eq(m.Message, m.Raw) {
				return true
			}
		}
	}
	return false
}

// checkCatalogueRecorded checks that each bad input, or each element of a
// bad batch, is in the cassette; one over the recording limit is there as
// the note that note gives for it.
func checkCatalogueRecorded(t *testing.T, c *cassettes.Cassette, lines []tapCase, note func(string) string) {
	t.Helper()
	limit := tapRecordLimit()
	if limit == 0 {
		limit = jsonrpc.DefaultMaxLine
	}
	for _, tc := range lines {
		want := []string{tc.line}
		var elems []json.RawMessage
		if json.Unmarshal([]byte(tc.line), &elems) == nil && len(elems) > 0 {
			want = want[:0]
			for _, e := range elems {
				want = append(want, string(e))
			}
		}
		for _, w := range want {
			if len(w) > limit {
				w = note(w)
			}
			if !recorded(c, w) {
				t.Errorf("%s: %.120q is not in the cassette", tc.name, w)
			}
		}
	}
}

// stdioNote is the stdio tap's note of a line over the limit.
func stdioNote(line string) string {
	limit := tapRecordLimit()
	if limit == 0 {
		limit = jsonrpc.DefaultMaxLine
	}
	return fmt.Sprintf("[mcpmock: a line of %d bytes passed; it is over the recording limit of %d bytes and was not kept]", len(line)+1, limit)
}

// TestBadInputThroughStdioTap runs a real go-sdk client's session through
// the stdio tap to a real mcp-go server (which answers bad input and goes
// on), with the catalogue's lines slipped in between the client's lines on
// the same stream. The server (testpeer.TeeMCPGo) keeps a copy of what it
// read and wrote: the tap must pass both ways byte for byte.
func TestBadInputThroughStdioTap(t *testing.T) {
	ctx := testCtx(t)
	direct := directStdio(t, testpeer.MCPGo, testpeer.ClientOptions{})

	dir := t.TempDir()
	path := filepath.Join(dir, "c.json")
	rec, err := New(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	argv, env := testpeer.Command(testpeer.TeeMCPGo)
	tee := filepath.Join(dir, "tee")
	env = append(env, testpeer.TeeEnvVar+"="+tee)

	catalogue := tapCatalogue()
	tapInR, tapInW := io.Pipe()   // into the tap
	tapOutR, tapOutW := io.Pipe() // out of the tap
	clientInR, clientInW := io.Pipe()
	clientOutR, clientOutW := io.Pipe()

	// The merge: the client's lines, each followed by the next bad line;
	// the last line without a newline once the client is done.
	var sent bytes.Buffer
	go func() {
		defer tapInW.Close()
		write := func(s string) bool {
			sent.WriteString(s)
			_, err := io.WriteString(tapInW, s)
			return err == nil
		}
		br := bufio.NewReader(clientOutR)
		next := 0
		for {
			line, err := br.ReadString('\n')
			if line != "" && !write(line) {
				return
			}
			if err != nil {
				break
			}
			if next < len(catalogue) {
				if !write(catalogue[next].line + "\n") {
					return
				}
				next++
			}
		}
		for ; next < len(catalogue); next++ {
			write(catalogue[next].line + "\n")
		}
		write(lastLine)
	}()
	// The split: what is the client's goes to it, the rest is kept.
	var received bytes.Buffer
	var others []string
	split := make(chan struct{})
	go func() {
		defer close(split)
		defer clientInW.Close()
		br := bufio.NewReaderSize(tapOutR, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			received.Write(line)
			if len(line) > 0 {
				if forClient(line) {
					clientInW.Write(line)
				} else {
					others = append(others, string(line))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	var status int
	go func() {
		var err error
		status, err = Stdio(ctx, argv, tapInR, tapOutW, os.Stderr, rec, &StdioOptions{Env: env, MaxLine: tapRecordLimit(), StopTimeout: time.Minute})
		tapOutW.Close()
		done <- err
	}()
	tapped, err := testpeer.RunGoSDK(ctx, clientInR, clientOutW, testpeer.ClientOptions{})
	if err != nil {
		t.Fatalf("the real client through the tap: %v", err)
	}
	if err := <-done; err != nil || status != 0 {
		t.Fatalf("Stdio = %d, %v", status, err)
	}
	<-split
	if diff := cmp.Diff(direct, tapped); diff != "" {
		t.Errorf("the real client saw something else beside the bad input (-direct +tapped):\n%s", diff)
	}

	gotIn, err := os.ReadFile(tee + ".in")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotIn, sent.Bytes()) {
		t.Errorf("the server read %d bytes, the client sent %d: the tap changed them (first difference at %d)", len(gotIn), sent.Len(), firstDiff(gotIn, sent.Bytes()))
	}
	gotOut, err := os.ReadFile(tee + ".out")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(gotOut, received.Bytes()) {
		t.Errorf("the server wrote %d bytes, the client received %d (first difference at %d)", len(gotOut), received.Len(), firstDiff(gotOut, received.Bytes()))
	}
	if len(others) == 0 {
		t.Error("the server answered none of the bad input through the tap")
	}

	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	checkCatalogueRecorded(t, rec.Cassette(), append(catalogue, tapCase{"the last line without a newline", lastLine}), stdioNote)
	if _, err := cassettes.Load(path); err != nil {
		t.Errorf("the saved cassette does not load: %v", err)
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
