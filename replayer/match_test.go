package replayer

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

func withMatch(interaction, match string) string {
	return strings.Replace(interaction, `"from":"client"`, `"from":"client","match":`+match, 1)
}

func matchedCassette(match string, interactions ...string) string {
	return `{"version":1,"meta":{},"match":` + match + `,"interactions":[` + strings.Join(interactions, ",") + `]}`
}

func matchCall(id int, tool, args string) string {
	return `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func resultText(t *testing.T, m map[string]any) string {
	t.Helper()
	res, _ := m["result"].(map[string]any)
	if res == nil {
		t.Fatalf("want a result, got %v", m)
	}
	return res["content"].([]any)[0].(map[string]any)["text"].(string)
}

func TestConfiguredCassetteReplays(t *testing.T) {
	w, _ := serveCassette(t, matchedCassette(`{"ignore":["arguments.ts"],"tools":{"search":{"subset":["arguments"],"unordered":["arguments.tags"]}}}`,
		call(1, "get_weather", `{"location":"Paris","ts":1}`, text("paris")),
		withMatch(call(2, "get_weather", `{"location":"New York"}`, text("new")), `{"regex":{"arguments.location":"^New "}}`),
		call(3, "search", `{"q":"x","tags":["a","b"]}`, text("found")),
		call(4, "stamp", `{"at":"{{any number}}"}`, text("stamped")),
	), nil)
	for _, tt := range []struct{ tool, args, want string }{
		{"get_weather", `{"location":"Paris","ts":99}`, "paris"},
		{"get_weather", `{"location":"New Orleans","ts":5}`, "new"},
		{"search", `{"q":"x","tags":["b","a"],"limit":10}`, "found"},
		{"stamp", `{"at":1767225600}`, "stamped"},
	} {
		w.send(matchCall(1, tt.tool, tt.args))
		if got := resultText(t, w.recv()); got != tt.want {
			t.Errorf("%s %s answered %q, want %q", tt.tool, tt.args, got, tt.want)
		}
	}
	// The regex is interaction 2's own: not the cassette's.
	w.send(matchCall(2, "search", `{"q":"New x","tags":[]}`))
	if m := w.recv(); m["error"] == nil {
		t.Errorf("a rule of one interaction applied to another: %v", m)
	}
	w.send(matchCall(3, "stamp", `{"at":"noon"}`))
	m := w.recv()
	if msg := m["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `arguments.at: recorded "{{any number}}", live "noon"`) {
		t.Errorf("placeholder miss: %s", msg)
	}
	w.close()
}

// TestExactBeforeLoose: of two matches, the one that needs no rule answers
// first, whatever the recorded order; then the looser one.
func TestExactBeforeLoose(t *testing.T) {
	w, _ := serveCassette(t, cassette(
		withMatch(call(1, "roll", `{"seed":1}`, text("loose")), `{"ignore":["arguments.seed"]}`),
		call(2, "roll", `{"seed":5}`, text("exact")),
	), &Options{Strict: true})
	var got []string
	for i := range 2 {
		w.send(matchCall(i, "roll", `{"seed":5}`))
		got = append(got, resultText(t, w.recv()))
	}
	if strings.Join(got, " ") != "exact loose" {
		t.Errorf("answers %q, want exact then loose", got)
	}
	w.close()
}

// TestGoMatcherUnderCassetteRules: Options.Matcher is the base, the
// cassette's rules apply over it, and only recorded requests of the live
// tool are tried.
func TestGoMatcherUnderCassetteRules(t *testing.T) {
	var calls atomic.Int64
	var seen atomic.Value
	caseless := matcher.Func(func(rec, live matcher.Request) matcher.Result {
		calls.Add(1)
		seen.Store(string(live.Params))
		if strings.EqualFold(string(rec.Params), string(live.Params)) {
			return matcher.Result{Match: true}
		}
		return matcher.Result{Differences: []matcher.Difference{{Path: "arguments", Recorded: string(rec.Params), Live: string(live.Params)}}}
	})
	var many []string
	for i := range 50 {
		many = append(many, call(i+10, fmt.Sprintf("other%d", i), `{}`, text("no")))
	}
	w, _ := serveCassette(t, matchedCassette(`{"ignore":["arguments.ts"]}`, append(many, call(1, "get_weather", `{"location":"Paris","ts":1}`, text("paris")))...), &Options{Matcher: caseless})
	w.send(matchCall(1, "get_weather", `{"location":"PARIS","ts":2}`))
	if got := resultText(t, w.recv()); got != "paris" {
		t.Errorf("answer %q", got)
	}
	if n := calls.Load(); n > 2 {
		t.Errorf("the matcher ran %d times for a cassette with one get_weather call", n)
	}
	if s := seen.Load().(string); strings.Contains(s, `"ts"`) {
		t.Errorf("the Go matcher saw the ignored path: %s", s)
	}
	w.close()
}

func TestMissHint(t *testing.T) {
	c, err := cassettes.Parse("t.json", []byte(cassette(
		call(1, "get_weather", `{"location":"Paris","_meta":{"com.example/req.id":"a"}}`, text("paris")),
		call(2, "get_weather", `{"location":"Rome","x":1,"y":2}`, text("rome")),
	)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	msg, _ := jsonrpc.Parse([]byte(matchCall(1, "get_weather", `{"location":"Paris","_meta":{"com.example/req.id":"b"}}`)))
	plan := s.plan(msg)
	if plan.Miss == nil {
		t.Fatal("no miss")
	}
	want := `to accept this, ignore arguments._meta.com\.example/req\.id: --match-ignore 'arguments._meta.com\.example/req\.id', or "match": {"ignore":["arguments._meta.com\\.example/req\\.id"]} in the cassette`
	if plan.Miss.Hint != want {
		t.Errorf("hint\n%s\nwant\n%s", plan.Miss.Hint, want)
	}
	if c := plan.Miss.Candidates; len(c) != 2 || c[0].Interaction != 1 {
		t.Errorf("candidates %+v, want interaction 1 first", c)
	}
	report := plan.Miss.Report()
	for _, want := range []string{"closest is interaction 1", "interaction 1 (-recorded +live):", `-`, `"a"`, `+`, `"b"`} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The hint holds: with the rule, the call replays.
	var cfg struct {
		Match json.RawMessage `json:"match"`
	}
	json.Unmarshal([]byte(`{"match":{"ignore":["arguments._meta.com\\.example/req\\.id"]}}`), &cfg)
	c.Match = cfg.Match
	e, err = New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan := e.newSession().plan(msg); plan.Miss != nil {
		t.Errorf("the hinted rule does not match: %s", plan.Miss.Report())
	}
}

func TestBadMatchConfig(t *testing.T) {
	for _, text := range []string{
		matchedCassette(`{"ignore":["a..b"]}`, call(1, "a", `{}`, text("a"))),
		cassette(withMatch(call(1, "a", `{}`, text("a")), `{"regex":{"a":"("}}`)),
	} {
		c, err := cassettes.Parse("t.json", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(c, nil); err == nil || !strings.Contains(err.Error(), `"match"`) {
			t.Errorf("New: %v", err)
		}
	}
}

// BenchmarkReplayCall measures one tools/call through a session against
// cassettes of 10, 1,000 and 100,000 distinct calls, and reports the ratio
// of each to the 10-interaction case of the same run ("x-of-10").
func BenchmarkReplayCall(b *testing.B) {
	configs := []struct{ name, match string }{
		{"default", ""},
		{"ignore", `{"ignore":["arguments.timestamp"]}`},
		{"regex", `{"tools":{"get_weather":{"regex":{"arguments.units":"^(metric|imperial)$"}}}}`},
	}
	for _, cfg := range configs {
		var base float64
		for _, n := range []int{10, 1000, 100000} {
			c := weatherCassette(n, cfg.match)
			e, err := New(c, nil)
			if err != nil {
				b.Fatal(err)
			}
			// The live calls: every 7th recorded city, with a new timestamp.
			const distinct = 64
			msgs := make([]*jsonrpc.Message, distinct)
			for i := range msgs {
				city := (i * 7919) % n
				msgs[i], _ = jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city %d","units":"metric","timestamp":%d}}}`, i, city, tsFor(cfg.name == "ignore", city, i)))
			}
			b.Run(fmt.Sprintf("%s/n=%d", cfg.name, n), func(b *testing.B) {
				s := e.newSession()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p := s.plan(msgs[i%distinct])
					if p.Miss != nil {
						b.Fatal(p.Miss.Report())
					}
					p.releaseAll()
				}
				perCall := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
				if n == 10 {
					base = perCall
				}
				if base > 0 {
					b.ReportMetric(perCall/base, "x-of-10")
				}
			})
		}
	}
}

func tsFor(loosened bool, city, i int) int {
	if loosened {
		return 1767225600 + i
	}
	return 1767225600 + city // the recorded value
}

func weatherCassette(n int, match string) *cassettes.Cassette {
	c := cassettes.New()
	if match != "" {
		c.Match = json.RawMessage(match)
	}
	c.Interactions = make([]cassettes.Interaction, n)
	for i := range n {
		c.Interactions[i] = cassettes.Interaction{
			From:    cassettes.FromClient,
			Request: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city %d","units":"metric","timestamp":%d}}}`, i+1, i, 1767225600+i),
			Response: &cassettes.Message{From: cassettes.FromServer,
				Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"weather %d"}]}}`, i+1, i)},
		}
	}
	return c
}

// TestExactBeforeLooseUnderOneRule: under a cassette-wide ignore rule, the
// index key decides the match for both recorded calls, and the exact key
// still puts the one that needs no rule first.
func TestExactBeforeLooseUnderOneRule(t *testing.T) {
	doc := cassette(
		call(1, "roll", `{"seed":1}`, text("loose")),
		call(2, "roll", `{"seed":5}`, text("exact")),
	)
	doc = strings.Replace(doc, `"meta":{},`, `"meta":{},"match":{"ignore":["arguments.seed"]},`, 1)
	w, _ := serveCassette(t, doc, &Options{Strict: true})
	var got []string
	for i := range 2 {
		w.send(matchCall(i, "roll", `{"seed":5}`))
		got = append(got, resultText(t, w.recv()))
	}
	if strings.Join(got, " ") != "exact loose" {
		t.Errorf("answers %q, want exact then loose", got)
	}
	w.close()
}

// TestRepeatsWithTimesInOrder: equal recorded calls answer in recorded
// order, each as often as its "times" allows, then the last one with no
// "times" again (or a miss under Strict). The index's plain key lists (a
// session keeps its place in them) and the general path, taken here when
// an ignore rule makes the key not exact, give the same sequence; another
// key's calls in between do not disturb it.
func TestRepeatsWithTimesInOrder(t *testing.T) {
	times := func(c, n string) string {
		return strings.Replace(c, `"from":"client"`, `"from":"client","times":`+n, 1)
	}
	recorded := []string{
		times(call(1, "roll", `{}`, text("A")), "2"),
		call(2, "roll", `{}`, text("B")),
		call(3, "other", `{}`, text("x")),
		times(call(4, "roll", `{}`, text("C")), "1"),
		call(5, "roll", `{}`, text("D")),
		times(call(6, "roll", `{}`, text("E")), "1"),
	}
	for _, strict := range []bool{false, true} {
		want := []string{"A", "A", "B", "C", "D", "E", "D", "D"}
		if strict {
			want = []string{"A", "A", "B", "C", "D", "E", "miss", "miss"}
		}
		for _, doc := range []string{cassette(recorded...), matchedCassette(`{"ignore":["arguments.zzz"]}`, recorded...)} {
			c, err := cassettes.Parse("t.json", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(c, &Options{Strict: strict})
			if err != nil {
				t.Fatal(err)
			}
			s := e.newSession()
			var got []string
			for i := range want {
				for _, tool := range []string{"roll", "other"} {
					msg, err := jsonrpc.Parse([]byte(matchCall(i, tool, `{}`)))
					if err != nil {
						t.Fatal(err)
					}
					plan := s.plan(msg)
					if tool == "other" {
						continue
					}
					if plan.Miss != nil {
						got = append(got, "miss")
						continue
					}
					var m map[string]any
					json.Unmarshal(plan.response(), &m)
					got = append(got, resultText(t, m))
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("strict %v, %.40s: answers (-want +got):\n%s", strict, doc[len(`{"version":1,"meta":{},`):], diff)
			}
		}
	}
}

// BenchmarkReplayRepeats measures one tools/call through a session when
// each call was recorded many times (a cassette recorded over several
// sessions, as the harness's HTTP one is): 64 distinct calls, each recorded
// 1 or 256 times. A call should cost the same either way.
func BenchmarkReplayRepeats(b *testing.B) {
	for _, repeats := range []int{1, 256} {
		c := cassettes.New()
		for i := range 64 * repeats {
			c.Interactions = append(c.Interactions, cassettes.Interaction{From: cassettes.FromClient,
				Request:  fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i+1, i%64),
				Response: &cassettes.Message{From: cassettes.FromServer, Message: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}`, i+1, i%64)}})
		}
		e, err := New(c, nil)
		if err != nil {
			b.Fatal(err)
		}
		msgs := make([]*jsonrpc.Message, 64)
		for i := range msgs {
			msgs[i], _ = jsonrpc.Parse(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m%d"}}}`, i, i))
		}
		b.Run(fmt.Sprintf("repeats=%d", repeats), func(b *testing.B) {
			b.ReportAllocs()
			// A session per 64 × repeats calls, as a client session of
			// the harness: it uses every recorded call once.
			s := e.newSession()
			for i := 0; b.Loop(); i++ {
				if i%(64*repeats) == 0 {
					s = e.newSession()
				}
				if p := s.plan(msgs[i%64]); p.Miss != nil {
					b.Fatal(p.Miss.Report())
				}
			}
		})
	}
}

// TestReplayCallAllocates: a replayed tools/call whose plan is released
// with its messages allocates nothing, and one released without them
// allocates its response alone. Garbage a call is what slows a large
// cassette down (page faults on fresh memory; see the README's Performance
// section).
func TestReplayCallAllocates(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race")
	}
	e, err := New(weatherCassette(1000, ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := e.newSession()
	msg, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city 7","units":"metric","timestamp":1767225607}}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"weather 7"}]}}`
	for _, c := range []struct {
		recycle func(*answerPlan)
		allocs  float64
	}{{(*answerPlan).releaseAll, 0}, {(*answerPlan).release, 1}} {
		var kept [][]byte
		call := func() {
			p := s.plan(msg)
			if p.Miss != nil || p.Interaction != 8 || len(p.Steps) != 1 || string(p.Steps[0].Message) != want {
				t.Fatalf("plan %+v", p)
			}
			kept = append(kept[:0], p.Steps[0].Message)
			c.recycle(p)
		}
		call()
		if n := testing.AllocsPerRun(200, call); n > c.allocs {
			t.Errorf("%.1f allocations a replayed call, want %v", n, c.allocs)
		}
		if c.allocs > 0 {
			// Released without its messages: the response stays the
			// caller's, whatever the next call builds.
			other, err := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":66,"method":"tools/call","params":{"name":"get_weather","arguments":{"location":"city 8","units":"metric","timestamp":1767225608}}}`))
			if err != nil {
				t.Fatal(err)
			}
			s.plan(other).releaseAll()
			if string(kept[0]) != want {
				t.Errorf("a response kept after Release changed: %s", kept[0])
			}
		}
	}
}

// BenchmarkNew is the engine's preparation of a loaded cassette of 10,000
// calls, the part of a replay's start that grows with the cassette.
func BenchmarkNew(b *testing.B) {
	c := weatherCassette(10000, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(c, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNewKeepsLittle: what the engine keeps of a cassette beyond the
// cassette itself, a recorded call, stays small, since a cassette of
// 100,000 calls must replay in twice its file size and 30 MiB (DESIGN.md).
// The index keeps a hash of each key, not its text (it kept 389
// bytes a call with the text, 244 without).
func TestNewKeepsLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector adds to every allocation; .ci/run runs this without it")
	}
	const n = 20000
	c := weatherCassette(n, "")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	e, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perCall := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("the engine keeps %.0f bytes a recorded call", perCall)
	if perCall > 260 {
		t.Errorf("the engine keeps %.0f bytes a recorded call, want at most 260", perCall)
	}
	runtime.KeepAlive(e)
	runtime.KeepAlive(c)
}
