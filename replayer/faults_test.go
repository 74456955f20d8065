package replayer

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
)

func overlay(t *testing.T, text string) *cassettes.Cassette {
	t.Helper()
	c, err := cassettes.Parse("overlay.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func callLine(id int, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// outcome summarises an answer: its text, "tool error: ...", or "error N".
func outcome(m map[string]any) string {
	if e, ok := m["error"].(map[string]any); ok {
		return "error " + itoa(int(e["code"].(float64)))
	}
	r := m["result"].(map[string]any)
	text := r["content"].([]any)[0].(map[string]any)["text"].(string)
	if r["isError"] == true {
		return "tool error: " + text
	}
	return text
}

// TestOverlayThirdCallRateLimited is the README's overlay: the third
// get_weather call answers the spec's rate-limit tool error.
func TestOverlayThirdCallRateLimited(t *testing.T) {
	o := overlay(t, `{"version": 1, "interactions": [
	  {"request": {"method": "tools/call", "params": {"name": "get_weather"}},
	   "when": {"nth": 3},
	   "response": {"message": {"result": {"isError": true,
	     "content": [{"type": "text", "text": "Failed to fetch weather data: API rate limit exceeded"}]}}}}]}`)
	w, _ := serveCassette(t, cassette(call(1, "get_weather", `{"location":"NYC"}`, text("sunny")), call(2, "other", `{}`, text("x"))), &Options{Overlays: []*cassettes.Cassette{o}})
	var got []string
	for i := range 5 {
		w.send(callLine(i, "get_weather", `{"location":"NYC"}`))
		m := w.recv()
		if m["id"] != float64(i) {
			t.Errorf("id %v, want %d", m["id"], i)
		}
		got = append(got, outcome(m))
	}
	want := []string{"sunny", "sunny", "tool error: Failed to fetch weather data: API rate limit exceeded", "sunny", "sunny"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("answers %q, want %q", got, want)
	}
	// Other tools do not count towards get_weather's calls.
	w.send(callLine(9, "other", `{}`))
	if o := outcome(w.recv()); o != "x" {
		t.Errorf("other tool: %s", o)
	}
	w.close()
}

func TestTriggers(t *testing.T) {
	tests := []struct {
		when string
		want string // per call, 1 for the fault, 0 for the recording
	}{
		{`{"every": 2}`, "010101"},
		{`{"from": 2, "to": 4}`, "011100"},
		{`{"from": 5}`, "000011"},
		{`{}`, "111111"},
	}
	for _, tt := range tests {
		t.Run(tt.when, func(t *testing.T) {
			o := overlay(t, `{"version":1,"interactions":[{"request":{"method":"tools/call","params":{"name":"a"}},"when":`+tt.when+`,
			  "response":{"message":{"error":{"code":-32603,"message":"boom"}}}}]}`)
			w, _ := serveCassette(t, cassette(call(1, "a", `{}`, text("ok"))), &Options{Overlays: []*cassettes.Cassette{o}})
			var got strings.Builder
			for i := range 6 {
				w.send(callLine(i, "a", `{}`))
				if outcome(w.recv()) == "error -32603" {
					got.WriteByte('1')
				} else {
					got.WriteByte('0')
				}
			}
			if got.String() != tt.want {
				t.Errorf("faults at %s, want %s", got.String(), tt.want)
			}
			w.close()
		})
	}
}

// TestProbabilitySeeded: the same seed gives the same sequence, another
// seed another one.
func TestProbabilitySeeded(t *testing.T) {
	sequence := func(seed uint64) string {
		o := overlay(t, `{"version":1,"interactions":[{"request":{"method":"tools/call","params":{"name":"a"}},"when":{"probability":0.5},
		  "response":{"message":{"error":{"code":-32000,"message":"flaky"}}}}]}`)
		w, _ := serveCassette(t, cassette(call(1, "a", `{}`, text("ok"))), &Options{Overlays: []*cassettes.Cassette{o}, Seed: seed})
		var b strings.Builder
		for i := range 40 {
			w.send(callLine(i, "a", `{}`))
			if outcome(w.recv()) == "ok" {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		w.close()
		return b.String()
	}
	a, b, c := sequence(7), sequence(7), sequence(8)
	if a != b {
		t.Errorf("seed 7 gave %s then %s", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 gave the same %s", a)
	}
	if !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("probability 0.5 gave %s", a)
	}
}

func TestStatesAndRateLimit(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := overlay(t, `{"version":1,"interactions":[
	  {"request":{"method":"tools/call","params":{"name":"login"}},"when":{"setState":"in"},"response":{"message":{"result":{"content":[{"type":"text","text":"welcome"}]}}}},
	  {"request":{"method":"tools/call","params":{"name":"a"}},"when":{"state":"in","rateLimit":{"calls":2,"windowMs":1000}},
	   "response":{"message":{"error":{"code":-32029,"message":"rate limited"}}}},
	  {"request":{"method":"tools/call","params":{"name":"a"}},"when":{"state":""},"response":{"message":{"error":{"code":-32001,"message":"log in first"}}}}]}`)
	w, _ := serveCassette(t, cassette(call(1, "a", `{}`, text("ok"))), &Options{Overlays: []*cassettes.Cassette{o}, Now: func() time.Time { return clock }})
	step := func(tool string, advance time.Duration) string {
		clock = clock.Add(advance)
		w.send(callLine(1, tool, `{}`))
		return outcome(w.recv())
	}
	got := []string{step("a", 0), step("login", 2*time.Second), step("a", 0), step("a", 0), step("a", 0), step("a", 2*time.Second)}
	want := []string{"error -32001", "welcome", "ok", "ok", "error -32029", "ok"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
	w.close()
}

func TestFaultsOnStdio(t *testing.T) {
	exit := 7
	tests := []struct {
		name  string
		fault cassettes.Fault
		check func(t *testing.T, w *wire)
	}{
		{"delay", cassettes.Fault{DelayMs: 150}, func(t *testing.T, w *wire) {
			start := time.Now()
			w.send(callLine(1, "a", `{}`))
			if outcome(w.recv()) != "ok" || time.Since(start) < 150*time.Millisecond {
				t.Errorf("not delayed: %v", time.Since(start))
			}
		}},
		{"no answer", cassettes.Fault{NoAnswer: true}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			w.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
			if m := w.recv(); m["id"] != float64(2) {
				t.Errorf("got %v, want only the ping's answer", m)
			}
		}},
		{"malformed", cassettes.Fault{Malformed: "line"}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			if l := <-w.lines; json.Valid([]byte(l)) {
				t.Errorf("got valid JSON %q", l)
			}
		}},
		{"truncated", cassettes.Fault{Malformed: "truncated"}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			if l := <-w.lines; json.Valid([]byte(l)) || !strings.HasPrefix(l, `{"jsonrpc":"2.0"`) {
				t.Errorf("got %q", l)
			}
		}},
		{"close", cassettes.Fault{Close: true}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			if l, ok := <-w.lines; ok {
				t.Errorf("got %q, want the connection closed", l)
			}
			if err := <-w.done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			w.done <- nil
		}},
		{"exit", cassettes.Fault{Exit: &exit}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			err := <-w.done
			var ee *ExitError
			if !errors.As(err, &ee) || ee.Status != 7 {
				t.Errorf("Serve: %v, want exit status 7", err)
			}
			w.done <- nil
		}},
		{"http status on stdio", cassettes.Fault{HTTPStatus: 429}, func(t *testing.T, w *wire) {
			w.send(callLine(1, "a", `{}`))
			m := w.recv()
			if outcome(m) != "error -32603" || !strings.Contains(m["error"].(map[string]any)["message"].(string), "429") {
				t.Errorf("got %v", m)
			}
		}},
		{"trickle", cassettes.Fault{TrickleBytesPerSec: 400}, func(t *testing.T, w *wire) {
			start := time.Now()
			w.send(callLine(1, "a", `{}`))
			if outcome(w.recv()) != "ok" || time.Since(start) < 100*time.Millisecond {
				t.Errorf("not trickled: %v", time.Since(start))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fault
			in := cassettes.Interaction{From: cassettes.FromClient, Request: json.RawMessage(`{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"a"}}`), Fault: &f}
			o := &cassettes.Cassette{Version: 1, Interactions: []cassettes.Interaction{in}}
			w, _ := serveCassette(t, cassette(call(1, "a", `{}`, text("ok"))), &Options{Overlays: []*cassettes.Cassette{o}})
			tt.check(t, w)
			w.close()
		})
	}
}

// TestFaultInCassette: "when" and "fault" in the recording itself.
func TestFaultInCassette(t *testing.T) {
	scripted := strings.Replace(call(5, "a", `{}`, text("scripted")), `"from":"client"`, `"from":"client","when":{"nth":2}`, 1)
	w, e := serveCassette(t, cassette(call(1, "a", `{}`, text("ok")), scripted), nil)
	var got []string
	for i := range 3 {
		w.send(callLine(i, "a", `{}`))
		got = append(got, outcome(w.recv()))
	}
	if strings.Join(got, "|") != "ok|scripted|ok" {
		t.Errorf("got %q", got)
	}
	w.close()
	if u := e.Stats().Unused; u != 0 {
		t.Errorf("a scripted interaction counts as unused: %d", u)
	}
}

func TestLatency(t *testing.T) {
	slow := strings.Replace(call(1, "a", `{}`, text("ok")), `"atMs":1,`, `"atMs":120,`, 1)
	w, _ := serveCassette(t, cassette(slow), &Options{Latency: Latency{Factor: 1}})
	start := time.Now()
	w.send(callLine(1, "a", `{}`))
	w.recv()
	if d := time.Since(start); d < 120*time.Millisecond {
		t.Errorf("recorded latency of 120ms replayed in %v", d)
	}
	w.close()
}

// TestOverlayMatchRules: an overlay interaction with "match" rules applies
// to the live requests those rules accept (here a regex on an argument).
func TestOverlayMatchRules(t *testing.T) {
	o := overlay(t, `{"version":1,"interactions":[
	  {"request":{"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"New York"}}},
	   "match":{"regex":{"arguments.location":"^New "}},
	   "response":{"message":{"error":{"code":-32000,"message":"no new places"}}}}]}`)
	w, _ := serveCassette(t, cassette(call(1, "get_weather", `{"location":"NYC"}`, text("sunny")), call(2, "get_weather", `{"location":"New Delhi"}`, text("hot")), call(3, "get_weather", `{"location":"Boston"}`, text("cold"))),
		&Options{Overlays: []*cassettes.Cassette{o}})
	var got []string
	for i, loc := range []string{"NYC", "New Delhi", "Boston"} {
		w.send(callLine(i, "get_weather", `{"location":"`+loc+`"}`))
		got = append(got, outcome(w.recv()))
	}
	if strings.Join(got, "|") != "sunny|error -32000|cold" {
		t.Errorf("got %q", got)
	}
	w.close()
}
