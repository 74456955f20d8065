package cassettes

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"
)

// randomCassette is a cassette with every form of interaction and message,
// drawn from rng.
func randomCassette(rng *rand.Rand, n int) *Cassette {
	c := New()
	c.Meta = Meta{RecordedBy: "test", Transport: "stdio", Server: []string{"srv", "-x"}, Note: "n\u00e9 \"q\""}
	if rng.IntN(2) == 0 {
		c.Match = json.RawMessage(`{"ignore": ["params._meta"]}`)
		c.Replay = &Replay{PageSize: 3}
	}
	dir := func() Direction {
		if rng.IntN(4) == 0 {
			return FromServer
		}
		return FromClient
	}
	text := func() string {
		return [...]string{"plain", "tab\there", "quote \" and \\ back", "uni \u00e9\u4e16 \U0001F600", "ctl \u0001", " spaced : , { } [ ] "}[rng.IntN(6)]
	}
	for i := range n {
		id := fmt.Sprint(i + 1)
		arg, _ := json.Marshal(text())
		in := Interaction{From: dir(), AtMs: Millis(float64(rng.IntN(100000)) / 1000)}
		switch rng.IntN(6) {
		case 0:
			in.Notification = json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"v":[1, 2.5e3, -0.1, true, false, null, {}, []]}}`)
			in.BeforeResponse = rng.IntN(2) == 0
			in.AfterExchange = rng.IntN(3)
		case 1:
			s := text()
			in.Raw = &s
		default:
			in.Request = json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"t","arguments":{"a":` + string(arg) + `}}}`)
			for range rng.IntN(3) {
				m := Message{From: FromServer, AtMs: 1.5, Message: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":` + string(arg) + `}}`)}
				if rng.IntN(4) == 0 {
					s := text()
					m = Message{From: FromClient, Raw: &s, Batch: rng.IntN(3)}
				}
				in.Exchange = append(in.Exchange, m)
			}
			if rng.IntN(5) > 0 {
				in.Response = &Message{From: FromServer, AtMs: 2, Message: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + string(arg) + `}]}}`)}
				if rng.IntN(5) == 0 {
					in.Response.Message = json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32602,"message":"bad","data":{"x":1}}}`)
				}
			}
			if rng.IntN(5) == 0 {
				in.Match = json.RawMessage(`{"params": "ignore"}`)
				in.Times = rng.IntN(3) - 1
			}
			if rng.IntN(5) == 0 {
				in.HTTP = &HTTP{URL: "/mcp", Status: 200, Form: "sse", EventIDs: []string{"1", "2"}, RequestHeaders: map[string]string{"Mcp-Session-Id": "s"}}
			}
		}
		if rng.IntN(8) == 0 && in.Request != nil {
			// Written by hand: normalize fills in the envelope.
			in.Request = json.RawMessage(`{"method":"ping","params":{}}`)
		}
		if rng.IntN(8) == 0 {
			in.Batch = 1 + rng.IntN(2)
		}
		c.Interactions = append(c.Interactions, in)
	}
	return c
}

// slowParse is the reference: the whole-file decoder.
func slowParse(data []byte) (*Cassette, error) { return parse("x.json", bytes.Clone(data)) }

// checkFast checks that the fast load of data gives the slow load's
// cassette, or gives up; with complete it must not give up.
func checkFast(t *testing.T, data []byte, complete bool) {
	t.Helper()
	want, werr := slowParse(data)
	for _, chunk := range []int{0, 7, 300} {
		var got *Cassette
		var err error
		if chunk == 0 {
			got, err = fastLoad(nil, data, int64(len(data)))
		} else {
			old := readChunk
			readChunk = chunk
			got, err = fastLoad(iotest.HalfReader(bytes.NewReader(data)), nil, int64(len(data)))
			readChunk = old
		}
		if err != nil {
			if !errors.Is(err, errSlow) {
				t.Fatalf("chunk %d: fast load: %v", chunk, err)
			}
			if complete {
				t.Fatalf("chunk %d: the fast load gave up on a good file (slow: %v):\n%s", chunk, werr, data)
			}
			continue
		}
		if werr != nil {
			t.Fatalf("chunk %d: the fast load took a file the slow one refuses (%v):\n%q", chunk, werr, data)
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := Encode(got)
			w, _ := Encode(want)
			t.Fatalf("chunk %d: fast and slow loads differ:\nfast: %s\nslow: %s\nfile: %q", chunk, g, w, data)
		}
	}
}

// TestFastLoadMatchesSlow: on random cassettes, pretty-printed, compact
// and spaced out, and on random corruptions of them, the fast load gives
// what the whole-file decoder gives, or leaves the file to it.
func TestFastLoadMatchesSlow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 15 {
		c := randomCassette(rng, rng.IntN(30))
		pretty, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		json.Compact(&compact, pretty)
		spaced := bytes.ReplaceAll(pretty, []byte("\n"), []byte("\r\n\t "))
		spaced = bytes.ReplaceAll(spaced, []byte(`":`), []byte(`"  :  `))
		for _, data := range [][]byte{pretty, compact.Bytes(), spaced} {
			checkFast(t, data, true)
			for range 20 {
				bad := bytes.Clone(data)
				switch k := rng.IntN(len(bad)); rng.IntN(3) {
				case 0:
					bad[k] = "{}[]\",:0-. \\nx"[rng.IntN(14)]
				case 1:
					bad = append(bad[:k:k], bad[k+1:]...)
				default:
					bad = bad[:k]
				}
				checkFast(t, bad, false)
			}
		}
	}
}

// TestLoadReadsInPieces: Load of a file larger than one read gives the
// cassette that was saved, and a broken one still reports its position.
func TestLoadReadsInPieces(t *testing.T) {
	c := randomCassette(rand.New(rand.NewPCG(3, 4)), 3000)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.json")
	if err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if len(data) < 2*readChunk {
		t.Fatalf("file of %d bytes is too small for the test", len(data))
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := slowParse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatal("Load and the whole-file decoder differ")
	}
	// Saved again, loaded and saved once more, it is the same file.
	again, _ := Encode(got)
	reloaded, err := Parse("again.json", again)
	if err != nil {
		t.Fatal(err)
	}
	if third, _ := Encode(reloaded); !bytes.Equal(again, third) {
		t.Fatal("a loaded cassette does not save byte for byte as it was")
	}
	// A stray byte near the end: the error names its line.
	at := bytes.LastIndex(data, []byte(`"from"`))
	bad := append(append(bytes.Clone(data[:at]), '}'), data[at:]...)
	os.WriteFile(path, bad, 0o644)
	_, err = Load(path)
	var pe *PosError
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("broken file: %v", err)
	}
	if line, _ := Position(bad, int64(at)); pe.Line != line {
		t.Fatalf("broken file: error on line %d, want %d (%v)", pe.Line, line, err)
	}
}

// FuzzFastLoad: whatever the bytes, the fast load agrees with the
// whole-file decoder or leaves the file to it.
func FuzzFastLoad(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 4 {
		data, _ := Encode(randomCassette(rng, 3))
		f.Add(data)
	}
	f.Add([]byte(`{"version":1,"interactions":[{"request":{"method":"x"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data, false)
	})
}
