package cassettes

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		in := Interaction{From: FromClient, AtMs: Millis(rng.Float64() * 100)}
		switch rng.IntN(3) {
		case 0:
			in.Request = msg()
			for range rng.IntN(3) {
				m := Message{From: FromServer, AtMs: Millis(rng.IntN(5)), Batch: rng.IntN(2)}
				if rng.IntN(4) == 0 {
					r := raws[rng.IntN(len(raws))]
					m.Raw = &r
				} else {
					m.Message = msg()
				}
				in.Exchange = append(in.Exchange, m)
			}
			if rng.IntN(3) > 0 {
				in.Response = &Message{From: FromServer, AtMs: 2.125, Message: msg()}
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
		want, err := appendInteractionJSON(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendInteraction(nil, &in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("interaction %d (-encoding/json +direct):\n%s", n, diff)
		}
	}
}

// BenchmarkAppendInteraction is the encoding of one recorded tools/call,
// direct against encoding/json as the baseline.
func BenchmarkAppendInteraction(b *testing.B) {
	in := benchCassette(1).Interactions[0]
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			AppendInteraction(nil, &in)
		}
	})
	b.Run("direct-reused-buffer", func(b *testing.B) {
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			dst, _ = AppendInteraction(dst[:0], &in)
		}
	})
	b.Run("baseline-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			appendInteractionJSON(nil, &in)
		}
	})
}

// TestAppendFlatKnowsEveryField fails when a field is added to Interaction
// or Message: appendFlat writes them by hand and must learn it (or leave
// such interactions to encoding/json, as it does those with HTTP details or
// a script).
func TestAppendFlatKnowsEveryField(t *testing.T) {
	names := func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		return out
	}
	if diff := cmp.Diff([]string{"from", "atMs", "request", "notification", "raw", "batch", "beforeResponse", "afterExchange", "exchange", "response", "match", "times", "http", "when", "fault"},
		names(reflect.TypeFor[Interaction]())); diff != "" {
		t.Errorf("Interaction's fields changed: teach appendFlat (-known +now):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"from", "atMs", "message", "raw", "batch"}, names(reflect.TypeFor[Message]())); diff != "" {
		t.Errorf("Message's fields changed: teach appendFlatMessage (-known +now):\n%s", diff)
	}
}
