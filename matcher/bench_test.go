package matcher

import (
	"encoding/json"
	"testing"
)

var (
	benchRecorded = Request{Method: "tools/call", Params: json.RawMessage(`{"name":"get_weather","arguments":{"location":"New York","units":"metric","days":[1,2,3]}}`)}
	benchLive     = Request{Method: "tools/call", Params: json.RawMessage(`{"_meta":{"progressToken":"p"},"arguments":{"days":[1,2,3],"units":"metric","location":"New York"},"name":"get_weather"}`)}
)

// BenchmarkKey is the default key of a live request (what a lookup costs),
// against the decoding view it replaces as the baseline.
func BenchmarkKey(b *testing.B) {
	b.Run("canonicalKey", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			canonicalKey(benchLive)
		}
	})
	b.Run("baseline-decode-view", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			viewKey(benchLive)
		}
	})
}

// BenchmarkMatch is a full comparison, with and without rules.
func BenchmarkMatch(b *testing.B) {
	cfg, err := ParseConfig(json.RawMessage(`{"ignore":["arguments.units"],"regex":{"arguments.location":"^New "}}`))
	if err != nil {
		b.Fatal(err)
	}
	withRules, err := WithConfig(nil, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for name, m := range map[string]Matcher{"default": Default(), "rules": withRules} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !m.Match(benchRecorded, benchLive).Match {
					b.Fatal("no match")
				}
			}
		})
	}
}
