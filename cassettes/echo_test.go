package cassettes

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// echoesOld is an old cassette whose tap recorded the echoes of a resumed
// stream as messages: interactions 4 to 6 repeat events 1, 2 and 4 with the
// same messages, 7 is the {} of a priming event, 8 repeats event 4 with
// another message, and 10 comes after a second initialize (another
// session: event 4 there is new).
const echoesOld = "testdata/echoes-old.json"

func TestLintNamesEchoes(t *testing.T) {
	data, err := os.ReadFile(echoesOld)
	if err != nil {
		t.Fatal(err)
	}
	problems, c := Lint(echoesOld, data, nil)
	if c == nil {
		t.Fatalf("no cassette: %v", problems)
	}
	if len(c.Interactions) != 10 {
		t.Errorf("Lint's cassette has %d interactions, want all 10", len(c.Interactions))
	}
	wantProblems(t, problems, []string{
		`warning: line 5, column 5: interaction 1: exchange message 1 is not a JSON-RPC message ("{}")`,
		`warning: line 14, column 5: interaction 4: its message is not a JSON-RPC message ("{}")`,
		`warning: line 14, column 5: interaction 4: a server message with SSE event id "1", which interaction 1 recorded already in this session: the server sent it again on a resumed stream (the same message: loading`,
		`warning: line 15, column 5: interaction 5: a server message with SSE event id "2", which interaction 1 recorded already`,
		`warning: line 16, column 5: interaction 6: a server message with SSE event id "4", which interaction 3 recorded already in this session: the server sent it again on a resumed stream (the same message`,
		`warning: line 17, column 5: interaction 7: its message is not a JSON-RPC message ("{}")`,
		`warning: line 18, column 5: interaction 8: a server message with SSE event id "4", which interaction 3 recorded already in this session: the server sent it again on a resumed stream (delete the one that is stale)`,
		// Interaction 5's raw line is JSON-RPC: a stale answer.
		`warning: line 15, column 5: interaction 5: a line that is not JSON-RPC`,
	})
}

func TestLoadDropsEchoes(t *testing.T) {
	data, err := os.ReadFile(echoesOld)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*Cassette{"Load": loaded, "Parse": parsed} {
		var got []Millis
		for _, in := range c.Interactions {
			got = append(got, in.AtMs)
		}
		// Kept: 1-3, the {} of 7 (no repeat: the replayer does not send
		// it), the stale 8 (another message), and 9-10.
		if diff := cmp.Diff([]Millis{1, 3, 4, 7, 8, 9, 11}, got); diff != "" {
			t.Errorf("%s: the interactions kept, by atMs (-want +got):\n%s", name, diff)
		}
		if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "dropped 3 server messages") || !strings.Contains(c.Warnings[0], "interactions 4, 5, 6") {
			t.Errorf("%s: warnings %q, want one naming interactions 4, 5, 6", name, c.Warnings)
		}
	}
}

// BenchmarkDropEchoes: what Load spends finding echoes, per interaction,
// on an HTTP cassette where every request has an event id and every fourth
// interaction is a GET-stream echo.
func BenchmarkDropEchoes(b *testing.B) {
	for _, n := range []int{1e3, 1e4, 1e5} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			ins := make([]Interaction, 0, n)
			for i := range n {
				id := strconv.Itoa(i)
				if i%4 == 3 {
					prev := ins[i-1].Response.Message
					ins = append(ins, Interaction{From: FromServer, Raw: ptr(string(prev)), HTTP: &HTTP{Stream: "get", EventIDs: []string{strconv.Itoa(i - 1)}}})
					continue
				}
				ins = append(ins, Interaction{From: FromClient, Request: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"a"}}`),
					Response: &Message{From: FromServer, Message: json.RawMessage(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`)},
					HTTP:     &HTTP{Form: "sse", EventIDs: []string{id}}})
			}
			b.ReportAllocs()
			var ns int64
			for b.Loop() {
				c := &Cassette{Interactions: slices.Clone(ins)}
				start := time.Now()
				c.dropEchoes()
				ns += time.Since(start).Nanoseconds()
				if len(c.Interactions) != n-n/4 {
					b.Fatalf("%d interactions kept, want %d", len(c.Interactions), n-n/4)
				}
			}
			b.ReportMetric(float64(ns)/float64(b.N)/float64(n), "ns/item")
		})
	}
}

func ptr[T any](v T) *T { return &v }
