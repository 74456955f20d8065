package cassettes

import (
	"encoding/json"
	"strconv"
	"testing"
)

func benchCassette(n int) *Cassette {
	c := New()
	for i := range n {
		id := strconv.Itoa(i + 1)
		c.Interactions = append(c.Interactions, Interaction{From: FromClient, AtMs: Millis(i),
			Request:  json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city-` + id + `"}}}`),
			Response: &Message{From: FromServer, AtMs: Millis(i) + 0.5, Message: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Sunny in city-` + id + `"}]}}`)}})
	}
	return c
}

// BenchmarkParse100 is loading a cassette of 100 interactions.
func BenchmarkParse100(b *testing.B) {
	data, _ := Encode(benchCassette(100))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("bench.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad100000 is loading a file of 100,000 interactions shaped
// like the bench harness's scale cassette (about 71 MB, pretty-printed).
func BenchmarkLoad100000(b *testing.B) {
	c := New()
	for i := range 100000 {
		id := strconv.Itoa(i + 1)
		c.Interactions = append(c.Interactions, Interaction{From: FromClient, AtMs: Millis(i),
			Request:  json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city-` + id + `","units":"metric"}}}`),
			Response: &Message{From: FromServer, AtMs: Millis(i) + 0.5, Message: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"Current weather in city-` + id + `: 21°C, partly cloudy, wind 12 km/h from the north-west"}]}}`)}})
	}
	path := b.TempDir() + "/big.json"
	if err := Save(path, c); err != nil {
		b.Fatal(err)
	}
	c = nil
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
