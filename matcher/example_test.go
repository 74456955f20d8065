package matcher_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpmock/mcpmock/matcher"
)

func weather(args string) matcher.Request {
	return matcher.Request{Method: "tools/call", Params: json.RawMessage(`{"name":"get_weather","arguments":` + args + `}`)}
}

// A client sends the time of each call: ignore it, for every tool or for one.
func ExampleWithConfig_ignoreTimestamp() {
	cfg, err := matcher.ParseConfig(json.RawMessage(`{"tools": {"get_weather": {"ignore": ["arguments.timestamp"]}}}`))
	if err != nil {
		panic(err)
	}
	m, err := matcher.WithConfig(nil, cfg) // nil: over the default matcher
	if err != nil {
		panic(err)
	}
	recorded := weather(`{"location": "New York", "timestamp": 1767225600}`)
	fmt.Println(m.Match(recorded, weather(`{"location": "New York", "timestamp": 1767229200}`)).Match)
	r := m.Match(recorded, weather(`{"location": "Boston", "timestamp": 1767229200}`))
	fmt.Println(r.Match, r.Differences[0])
	// Output:
	// true
	// false arguments.location: recorded "New York", live "Boston"
}

// Any city whose name starts with "New" gets the recorded New York weather.
func ExampleWithConfig_regex() {
	m, _ := matcher.WithConfig(nil, &matcher.Config{Regex: map[string]string{"arguments.location": "^New "}})
	recorded := weather(`{"location": "New York"}`)
	for _, city := range []string{"New Orleans", "Boston"} {
		r := m.Match(recorded, weather(`{"location": "`+city+`"}`))
		fmt.Println(city, r.Match, r.Differences)
	}
	// Output:
	// New Orleans true []
	// Boston false [arguments.location: live "Boston" does not match regex ^New ]
}

// A newer client sends more arguments than the recording has: a subset
// match accepts them, but still wants every recorded one.
func ExampleWithConfig_subset() {
	m, _ := matcher.WithConfig(nil, &matcher.Config{Subset: []string{"arguments"}})
	recorded := weather(`{"location": "New York"}`)
	fmt.Println(m.Match(recorded, weather(`{"location": "New York", "units": "metric"}`)).Match)
	fmt.Println(m.Match(recorded, weather(`{"units": "metric"}`)).Differences)
	// Output:
	// true
	// [arguments.location: recorded "New York", live has none]
}

// A custom Go matcher: city names compared without regard to case, on top
// of the default comparison of everything else.
func ExampleFunc() {
	city := func(r matcher.Request) string {
		var p struct {
			Arguments struct {
				Location string `json:"location"`
			} `json:"arguments"`
		}
		json.Unmarshal(r.Params, &p)
		return p.Arguments.Location
	}
	sameCity := matcher.Func(func(recorded, live matcher.Request) matcher.Result {
		if !strings.EqualFold(city(recorded), city(live)) {
			return matcher.Result{Differences: []matcher.Difference{{Path: "arguments.location", Live: city(live), Rule: "the same city in any case"}}}
		}
		return matcher.Result{Match: true}
	})
	// The default matcher compares everything but the location, the Func
	// the location; replayer.Options{Matcher: m} replays with it.
	ignoreCity, err := matcher.WithConfig(nil, &matcher.Config{Ignore: []string{"arguments.location"}})
	if err != nil {
		panic(err)
	}
	m := matcher.All(ignoreCity, sameCity)
	fmt.Println(m.Match(weather(`{"location": "New York"}`), weather(`{"location": "NEW YORK"}`)).Match)
	fmt.Println(m.Match(weather(`{"location": "New York"}`), weather(`{"location": "Boston"}`)).Differences)
	// Output:
	// true
	// [arguments.location: live Boston does not match the same city in any case]
}

// ParseConfig reports where a configuration is wrong.
func ExampleParseConfig() {
	_, err := matcher.ParseConfig(json.RawMessage(`{"ignore": ["arguments.timestamp"], "regex": {"arguments.location": "^(New"}}`))
	var ce *matcher.ConfigError
	if errors.As(err, &ce) {
		fmt.Println("at byte", ce.Offset, "in", ce.Where)
	}
	fmt.Println(err)
	// Output:
	// at byte 68 in regex["arguments.location"]
	// regex["arguments.location"]: bad regular expression: error parsing regexp: missing closing ): `^(New`
}

// Decode keeps numbers exact, as json.Number, for comparing; Plain gives
// them as numbers for showing (cmp.Diff then writes int64(2), not s"2").
func ExamplePlain() {
	tree, _ := matcher.Decode(json.RawMessage(`{"a": 2, "b": 0.5, "c": 1.0e1}`))
	plain := matcher.Plain(tree).(map[string]any)
	for _, k := range []string{"a", "b", "c"} {
		fmt.Printf("%s: %T %v → %T %v\n", k, tree.(map[string]any)[k], tree.(map[string]any)[k], plain[k], plain[k])
	}
	// Output:
	// a: json.Number 2 → int64 2
	// b: json.Number 0.5 → float64 0.5
	// c: json.Number 10 → int64 10
}
