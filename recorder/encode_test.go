package recorder

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpmock/mcpmock/cassettes"
)

// randomJSON returns valid JSON text with white space here and there,
// escapes, non-ASCII text, empty and nested containers.
func randomJSON(rng *rand.Rand, depth int) string {
	ws := func() string { return []string{"", "", " ", "\n  ", "\t"}[rng.IntN(5)] }
	switch k := rng.IntN(8); {
	case depth > 3 || k < 3:
		return []string{`"a"`, `""`, `"q\"uo\\\\te\\"`, `"é ü \u2028 ` + "\u2028" + `"`, `"tab\tnl\n"`, `12`, `-0.5e+10`, `true`, `null`, `"<&>"`, `"\\"`}[rng.IntN(11)]
	case k < 5:
		n := rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = ws() + randomJSON(rng, depth+1) + ws()
		}
		return "[" + ws() + strings.Join(parts, ",") + "]"
	default:
		n := rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = ws() + `"k` + string(rune('a'+i)) + `"` + ws() + ":" + ws() + randomJSON(rng, depth+1) + ws()
		}
		return "{" + ws() + strings.Join(parts, ",") + "}"
	}
}

// TestAppendInteractionIsEncodingJSON checks the direct encoding of
// recorded interactions byte for byte against encoding/json's.
func TestAppendInteractionIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	raws := []string{"plain", "", "tab\there", "nl\nthere", "quote\"", "back\\slash", "\x00\x1f", "é", "\u2028", "bad \xff utf-8", "<&>", "\x7f"}
	msg := func() json.RawMessage { return json.RawMessage(randomJSON(rng, 0)) }
	for n := range 3000 {
		in := cassettes.Interaction{From: cassettes.FromClient, AtMs: cassettes.Millis(rng.Float64() * 100)}
		switch rng.IntN(3) {
		case 0:
			in.Request = msg()
			for range rng.IntN(3) {
				m := cassettes.Message{From: cassettes.FromServer, AtMs: cassettes.Millis(rng.IntN(5)), Batch: rng.IntN(2)}
				if rng.IntN(4) == 0 {
					r := raws[rng.IntN(len(raws))]
					m.Raw = &r
				} else {
					m.Message = msg()
				}
				in.Exchange = append(in.Exchange, m)
			}
			if rng.IntN(3) > 0 {
				in.Response = &cassettes.Message{From: cassettes.FromServer, AtMs: 2.125, Message: msg()}
			}
		case 1:
			in.Notification = msg()
			in.Batch = rng.IntN(3)
			in.BeforeResponse = rng.IntN(2) == 0
			in.AfterExchange = rng.IntN(3)
		default:
			r := raws[rng.IntN(len(raws))]
			in.Raw = &r
		}
		if rng.IntN(10) == 0 {
			in.Match, in.Times = msg(), rng.IntN(3)-1
		}
		if rng.IntN(2) == 0 {
			in.HTTP = randomHTTP(rng, raws)
		}
		want, err := appendInteractionJSON(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendInteraction(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("interaction %d (-encoding/json +direct):\n%s", n, diff)
		}
	}
}

// randomHTTP returns HTTP details with each member set or not, strings
// from texts (escapes, non-ASCII text, invalid UTF-8 among them), and
// header maps nil, empty, or of up to 12 names.
func randomHTTP(rng *rand.Rand, texts []string) *cassettes.HTTP {
	text := func() string {
		if rng.IntN(2) == 0 {
			return ""
		}
		return texts[rng.IntN(len(texts))]
	}
	headers := func() map[string]string {
		switch n := rng.IntN(5); n {
		case 0:
			return nil
		case 1:
			return map[string]string{}
		default:
			m := map[string]string{}
			for range rng.IntN(12) + 1 {
				m[[]string{"Content-Type", "Mcp-Session-Id", "Mcp-Method", "a", "B", "ü", "x\\"}[rng.IntN(7)]+text()] = text()
			}
			return m
		}
	}
	h := &cassettes.HTTP{URL: text(), Form: text(), Stream: text(), Body: text(), RequestHeaders: headers(), ResponseHeaders: headers()}
	if rng.IntN(2) == 0 {
		h.Status = []int{200, 202, 404, -1}[rng.IntN(4)]
	}
	for range rng.IntN(3) {
		h.EventIDs = append(h.EventIDs, text())
	}
	return h
}

// BenchmarkAppendInteraction is the encoding of one recorded tools/call,
// over stdio and over HTTP (with the details a stateless tap records),
// direct against encoding/json as the baseline.
func BenchmarkAppendInteraction(b *testing.B) {
	stdio := benchCassette(1).Interactions[0]
	http := stdio
	http.HTTP = &cassettes.HTTP{URL: "/mcp", Status: 200, Form: "sse",
		RequestHeaders:  map[string]string{"Content-Type": "application/json", "Mcp-Method": "tools/call", "Mcp-Name": "get_weather", "Mcp-Protocol-Version": "2026-07-28"},
		ResponseHeaders: map[string]string{"Content-Type": "text/event-stream"}}
	for _, c := range []struct {
		name string
		in   *cassettes.Interaction
	}{{"", &stdio}, {"http-", &http}} {
		b.Run(c.name+"direct", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				appendInteraction(nil, c.in)
			}
		})
		b.Run(c.name+"direct-reused-buffer", func(b *testing.B) {
			b.ReportAllocs()
			var dst []byte
			for b.Loop() {
				dst, _ = appendInteraction(dst[:0], c.in)
			}
		})
		b.Run(c.name+"baseline-encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				appendInteractionJSON(nil, c.in)
			}
		})
	}
}

// TestAppendFlatKnowsEveryField fails when a field is added to
// Interaction, Message or HTTP: appendFlat writes them by hand and must
// learn it (or leave such interactions to encoding/json, as it does those
// with a script).
func TestAppendFlatKnowsEveryField(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		return out
	}
	if diff := cmp.Diff([]string{"from", "atMs", "request", "notification", "raw", "batch", "beforeResponse", "afterExchange", "exchange", "response", "match", "times", "http", "when", "fault"},
		names(reflect.TypeFor[cassettes.Interaction]())); diff != "" {
		t.Errorf("Interaction's fields changed: teach appendFlat (-known +now):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"from", "atMs", "message", "raw", "batch"}, names(reflect.TypeFor[cassettes.Message]())); diff != "" {
		t.Errorf("Message's fields changed: teach appendFlatMessage (-known +now):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"url", "status", "form", "stream", "eventIds", "requestHeaders", "responseHeaders", "body"}, names(reflect.TypeFor[cassettes.HTTP]())); diff != "" {
		t.Errorf("HTTP's fields changed: teach appendFlatHTTP (-known +now):\n%s", diff)
	}
}

// TestIncrementalEncoder: the incremental encoding is Encode's, byte for
// byte, as the cassette grows and changes.
func TestIncrementalEncoder(t *testing.T) {
	c := sample()
	var e incrementalEncoder
	check := func(step string) {
		t.Helper()
		want, err := cassettes.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s: incremental encoding differs:\n%s\n---\n%s", step, got, want)
		}
	}
	check("first")
	check("unchanged")
	c.Interactions[0].Exchange = append(c.Interactions[0].Exchange, cassettes.Message{From: cassettes.FromClient, AtMs: 2.5, Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)})
	check("exchange grew")
	c.Interactions[1].HTTP = &cassettes.HTTP{Status: 202, Form: "none", RequestHeaders: map[string]string{"A": "b"}}
	check("http added")
	c.Interactions[1].HTTP.ResponseHeaders = map[string]string{"Content-Type": "x"}
	c.Interactions[1].HTTP.Status = 200
	check("http changed")
	c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, AtMs: 9, Request: json.RawMessage(`{"jsonrpc":"2.0","id":"<&>","method":"ping"}`)})
	check("appended")
	c.Interactions = c.Interactions[:1]
	check("shrunk")
	c.Interactions = nil
	check("empty")
}

// BenchmarkSaveWhileRecording is what the recorder does per save of a
// growing 1,000-interaction cassette with 10 new interactions: the
// incremental encoder, against a full Encode as the baseline.
func BenchmarkSaveWhileRecording(b *testing.B) {
	c := benchCassette(1000)
	more := benchCassette(1010).Interactions[1000:]
	b.Run("incremental", func(b *testing.B) {
		var e incrementalEncoder
		e.Write(io.Discard, c)
		for b.Loop() {
			grown := *c
			grown.Interactions = append(c.Interactions[:1000:1000], more...)
			if err := e.Write(io.Discard, &grown); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-full-encode", func(b *testing.B) {
		for b.Loop() {
			grown := *c
			grown.Interactions = append(c.Interactions[:1000:1000], more...)
			if _, err := cassettes.Encode(&grown); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// incrementalEncoder encodes a growing cassette again and again, as the
// recorder does while recording, re-encoding only the interactions that
// changed since the last call. Its output is byte for byte that of cassettes.Encode. It is
// the test of what the recorder's saves put together (save.go).
// The zero value is ready to use; it is safe for concurrent use.
type incrementalEncoder struct {
	mu     sync.Mutex // guards the fields below
	seed   maphash.Seed
	seeded bool
	parts  [][]byte // the encoding of each interaction
	prints []uint64 // the fingerprint each part was encoded from
}

// Encode returns the cassette as Encode does.
func (e *incrementalEncoder) Encode(c *cassettes.Cassette) ([]byte, error) {
	var buf bytes.Buffer
	if err := e.Write(&buf, c); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes the cassette to w as Encode encodes it, without building the
// whole file in memory.
func (e *incrementalEncoder) Write(w io.Writer, c *cassettes.Cassette) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.seeded {
		e.seed, e.seeded = maphash.MakeSeed(), true
	}
	head, tail, err := encodeHead(c)
	if err != nil {
		return err
	}
	if len(c.Interactions) == 0 {
		_, err := w.Write(emptyFile(head, tail))
		return err
	}
	if len(e.parts) > len(c.Interactions) {
		e.parts, e.prints = e.parts[:len(c.Interactions)], e.prints[:len(c.Interactions)]
	}
	for i := range c.Interactions {
		in := &c.Interactions[i]
		fp := fingerprint(e.seed, in)
		if i < len(e.parts) && e.prints[i] == fp {
			continue
		}
		part, err := appendInteraction(nil, in)
		if err != nil {
			return fmt.Errorf("encode cassette: interaction %d: %w", i+1, err)
		}
		if i < len(e.parts) {
			e.parts[i], e.prints[i] = part, fp
		} else {
			e.parts, e.prints = append(e.parts, part), append(e.prints, fp)
		}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(head)
	for i, p := range e.parts {
		if i > 0 {
			bw.WriteString(",")
		}
		bw.Write(p)
	}
	bw.Write(tail)
	return bw.Flush()
}

// sample is a cassette with a request, its progress and response, a
// notification and a line that is not JSON.
func sample() *cassettes.Cassette {
	c := cassettes.New()
	c.Meta = cassettes.Meta{Transport: "stdio", Server: []string{"srv"}}
	raw := "not json"
	c.Interactions = append(c.Interactions,
		cassettes.Interaction{From: cassettes.FromClient, AtMs: 1.23456, Request: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"n":12345678901234567890}}}`),
			Exchange: []cassettes.Message{{From: cassettes.FromServer, AtMs: 2, Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`)}},
			Response: &cassettes.Message{From: cassettes.FromServer, AtMs: 3, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)}},
		cassettes.Interaction{From: cassettes.FromClient, AtMs: 4, Notification: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)},
		cassettes.Interaction{From: cassettes.FromServer, AtMs: 5, Raw: &raw},
	)
	return c
}

// benchCassette is a cassette of n answered tool calls.
func benchCassette(n int) *cassettes.Cassette {
	c := cassettes.New()
	for i := range n {
		id := strconv.Itoa(i + 1)
		c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient, AtMs: cassettes.Millis(i),
			Request:  json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city-` + id + `"}}}`),
			Response: &cassettes.Message{From: cassettes.FromServer, AtMs: cassettes.Millis(i) + 0.5, Message: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Sunny in city-` + id + `"}]}}`)}})
	}
	return c
}

// BenchmarkFingerprint is the fingerprint of a recorded tools/call, taken
// twice a call (when it is encoded early and when it is saved).
func BenchmarkFingerprint(b *testing.B) {
	in := &cassettes.Interaction{From: cassettes.FromClient, AtMs: 12.5,
		Request:  json.RawMessage(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m7"}}}`),
		Response: &cassettes.Message{From: cassettes.FromServer, AtMs: 13, Message: json.RawMessage(`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)}}
	seed := maphash.MakeSeed()
	var sink uint64
	for b.Loop() {
		sink += fingerprint(seed, in)
	}
	_ = sink
}

// TestFingerprint: the fingerprint of an interaction is the same while it
// does not change and differs after each change a recording makes.
func TestFingerprint(t *testing.T) {
	seed := maphash.MakeSeed()
	base := func() *cassettes.Interaction {
		return &cassettes.Interaction{From: cassettes.FromClient, AtMs: 1,
			Request: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`),
			HTTP:    &cassettes.HTTP{Status: 200, RequestHeaders: map[string]string{"A": "1"}}}
	}
	raw := "x"
	long := strings.Repeat("h", 300) // longer than the printer's buffer
	changes := map[string]func(in *cassettes.Interaction){
		"the response came": func(in *cassettes.Interaction) {
			in.Response = &cassettes.Message{From: cassettes.FromServer, Message: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{}}`)}
		},
		"another request": func(in *cassettes.Interaction) {
			in.Request = json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		},
		"its time":        func(in *cassettes.Interaction) { in.AtMs = 2 },
		"times":           func(in *cassettes.Interaction) { in.Times = 2 },
		"a batch":         func(in *cassettes.Interaction) { in.Batch = 1 },
		"before response": func(in *cassettes.Interaction) { in.BeforeResponse = true },
		"a raw line":      func(in *cassettes.Interaction) { in.Raw = &raw },
		"an exchange": func(in *cassettes.Interaction) {
			in.Exchange = append(in.Exchange, cassettes.Message{From: cassettes.FromServer})
		},
		"a header value": func(in *cassettes.Interaction) { in.HTTP.RequestHeaders["A"] = "2" },
		"a response header": func(in *cassettes.Interaction) {
			in.HTTP.ResponseHeaders = map[string]string{"B": "1"}
		},
		"the status":   func(in *cassettes.Interaction) { in.HTTP.Status = 202 },
		"an event id":  func(in *cassettes.Interaction) { in.HTTP.EventIDs = append(in.HTTP.EventIDs, "e1") },
		"a long body":  func(in *cassettes.Interaction) { in.HTTP.Body = long },
		"the stream":   func(in *cassettes.Interaction) { in.HTTP.Stream = "get" },
		"no HTTP note": func(in *cassettes.Interaction) { in.HTTP = nil },
	}
	in := base()
	want := fingerprint(seed, in)
	if again := fingerprint(seed, in); again != want {
		t.Fatalf("two fingerprints of one interaction: %x and %x", want, again)
	}
	for name, change := range changes {
		in := base()
		in.Request = base().Request // the same bytes, another message
		before := fingerprint(seed, in)
		change(in)
		if got := fingerprint(seed, in); got == before {
			t.Errorf("%s: the fingerprint did not change (%x)", name, got)
		}
	}
}

// FuzzAppendIndented: appendIndented writes what json.Compact then
// json.Indent write, for any valid JSON text, and fails on no valid text.
func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,2,{"b":null}],"c":"x\"y\\"}`, ` [ true , false,-1.5e3 ] `,
		`{"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
		`"\u00e9"`, `0`, `{"a" : {"b" :[ ]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if !json.Valid(src) {
			return
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, src); err != nil {
			t.Fatal(err)
		}
		if err := json.Indent(&want, compact.Bytes(), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		got, err := appendIndented([]byte("x"), src, "    ", "  ")
		if err != nil {
			t.Fatalf("appendIndented(%q): %v", src, err)
		}
		if string(got[1:]) != want.String() {
			t.Fatalf("appendIndented(%q) =\n%s\nwant\n%s", src, got[1:], want.String())
		}
	})
}

// appendIndented refuses text whose brackets do not pair up, even one
// that closes more than it opened, rather than indent it.
func TestAppendIndentedUnbalanced(t *testing.T) {
	for _, src := range []string{`}`, `[1]]`, `{"a":1`, `[`} {
		if _, err := appendIndented(nil, []byte(src), "    ", "  "); err == nil {
			t.Errorf("appendIndented(%q): no error", src)
		}
	}
}

// TestAppendFinishedOwnSize: an encoding made on its own (the live
// interactions' a save keeps) holds about its own size, not the room its
// encoder asked for (twice the message), and the scratch buffer it was
// made in is handed back for the next; one made into a chunk follows the
// one before it.
func TestAppendFinishedOwnSize(t *testing.T) {
	fin, err := cassettes.NewFinisher(&cassettes.SaveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	in := cassettes.Interaction{From: cassettes.FromClient,
		Request: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 2000) + `"}}}`)}
	scratch, data, _, err := appendFinished(fin, nil, false, &in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"method": "tools/call"`) || data[0] != ',' {
		t.Fatalf("encoding %.80q…", data)
	}
	if cap(data) > len(data)+len(data)/8 {
		t.Errorf("the encoding holds %d bytes for its %d", cap(data), len(data))
	}
	if len(scratch) > 0 && &scratch[0] == &data[0] {
		t.Errorf("the encoding is the scratch buffer")
	}
	chunk, first, _, err := appendFinished(fin, nil, true, &in)
	if err != nil {
		t.Fatal(err)
	}
	chunk, second, _, err := appendFinished(fin, chunk, true, &in)
	if err != nil {
		t.Fatal(err)
	}
	if &chunk[0] != &first[0] || &chunk[len(first)] != &second[0] {
		t.Errorf("the chunked encodings are not one after another in the chunk")
	}
}
