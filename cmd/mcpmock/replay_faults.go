package main

import (
	"encoding/json"
	"fmt"
	"github.com/mcpmock/mcpmock/internal/rate"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/replayer"
)

// faultFlags are replay's flags for scripted behaviour: overlays, fault
// shortcuts, the seed and the latency.
type faultFlags struct {
	overlays []string
	faults   []string
	seed     uint64
	latency  string
}

func (f *faultFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.overlays, "overlay", nil, "overlay cassette of scripted interactions, tried before the recording (repeatable)")
	fs.StringArrayVar(&f.faults, "fault", nil, "a scripted fault, SELECTOR=ACTION, e.g. 'get_weather#3=tool-error:API rate limit exceeded' (repeatable): "+faultGrammar)
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the random source for probabilities and random delays")
	fs.StringVar(&f.latency, "latency", "", `answer delay: "recorded" (the recorded pacing), a factor like "2x", or a duration like "300ms"`)
}

// apply loads the overlays, compiles the fault shortcuts and sets opts.
func (f *faultFlags) apply(opts *replayer.Options) error {
	opts.Seed = f.seed
	if f.latency != "" {
		lat, err := parseLatency(f.latency)
		if err != nil {
			return err
		}
		opts.Latency = lat
	}
	if len(f.faults) > 0 {
		c := cassettes.New()
		for _, spec := range f.faults {
			in, err := parseFault(spec)
			if err != nil {
				return usagef("--fault %q: %v", spec, err)
			}
			c.Interactions = append(c.Interactions, in)
		}
		opts.Overlays = append(opts.Overlays, c)
	}
	for _, path := range f.overlays {
		c, err := cassettes.Load(path)
		if err != nil {
			return err
		}
		opts.Overlays = append(opts.Overlays, c)
	}
	return nil
}

func parseLatency(s string) (replayer.Latency, error) {
	switch {
	case s == "recorded":
		return replayer.Latency{Factor: 1}, nil
	case strings.HasSuffix(s, "x"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "x"), 64)
		if err != nil || f < 0 {
			return replayer.Latency{}, usagef("--latency %q: want a factor like 2x", s)
		}
		return replayer.Latency{Factor: f}, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return replayer.Latency{}, usagef(`--latency %q: want "recorded", a factor like 2x, or a duration like 300ms`, s)
	}
	return replayer.Latency{Fixed: d}, nil
}

// faultGrammar is the grammar of --fault, for its help and its errors.
const faultGrammar = `SELECTOR is a tool name or a method (it has a "/"), then optionally #N (the Nth call), #N-M (calls N to M), #N- (from the Nth on), %K (every Kth call), ~P (with probability P, 0 to 1) or @N/DURATION (past N calls within DURATION); ACTION is one of ` + faultActions

// faultActions lists the actions of --fault.
const faultActions = `tool-error:MESSAGE, error:CODE[:MESSAGE], delay:DURATION, no-answer, close, exit:STATUS, malformed, truncated, http:STATUS[:Header=Value...], cut:N, trickle:BYTES_PER_SECOND`

// parseFault compiles a --fault shortcut, SELECTOR=ACTION, into a scripted
// interaction.
//
// SELECTOR is a tool name (a tools/call of that tool) or a method (it has a
// "/"), then optionally: #N (the Nth call), #N-M (calls N to M), #N- (from
// the Nth on), %K (every Kth), ~P (with probability P), @N/DURATION (past N
// calls within DURATION).
//
// ACTION is one of: tool-error:MESSAGE, error:CODE[:MESSAGE], delay:DURATION,
// no-answer, close, exit:STATUS, malformed, truncated,
// http:STATUS[:Header=Value...], cut:N, trickle:BYTES_PER_SECOND.
func parseFault(spec string) (cassettes.Interaction, error) {
	sel, action, ok := strings.Cut(spec, "=")
	if !ok || sel == "" || action == "" {
		return cassettes.Interaction{}, fmt.Errorf("want SELECTOR=ACTION: %s", faultGrammar)
	}
	name := sel
	if i := strings.IndexAny(sel, "#%~@"); i >= 0 {
		name = sel[:i]
	}
	var when cassettes.When
	rest := sel[len(name):]
	for rest != "" {
		op := rest[0]
		j := strings.IndexAny(rest[1:], "#%~@")
		arg := rest[1:]
		if j >= 0 {
			arg, rest = rest[1:1+j], rest[1+j:]
		} else {
			rest = ""
		}
		// count parses a whole number from 1.
		count := func(s string) (int, bool) {
			n, err := strconv.Atoi(s)
			return n, err == nil && n >= 1
		}
		ok := false
		var want string
		switch op {
		case '#':
			want = "#N (the Nth call), #N-M (calls N to M) or #N- (from the Nth on), with whole numbers from 1"
			from, to, isRange := strings.Cut(arg, "-")
			if !isRange {
				when.Nth, ok = count(arg)
				break
			}
			if when.From, ok = count(from); ok && to != "" {
				when.To, ok = count(to)
				ok = ok && when.To >= when.From
			}
		case '%':
			want = "%K (every Kth call), with a whole number from 1"
			when.Every, ok = count(arg)
		case '~':
			want = "~P (with probability P), with P from 0 to 1"
			p, err := strconv.ParseFloat(arg, 64)
			when.Probability, ok = p, err == nil && p >= 0 && p <= 1
		case '@':
			want = "@N/DURATION (past N calls within DURATION), e.g. @5/1m"
			r, err := rate.Parse(arg)
			ok = err == nil && r.N > 0
			when.RateLimit = &cassettes.RateLimit{Calls: r.N, WindowMs: float64(r.Per) / float64(time.Millisecond)}
		}
		if !ok {
			return cassettes.Interaction{}, fmt.Errorf("selector %q: %c%s: want %s", sel, op, arg, want)
		}
	}
	method, params := name, json.RawMessage(nil)
	if !strings.Contains(name, "/") {
		method = "tools/call"
		params, _ = json.Marshal(map[string]string{"name": name})
	}
	req := map[string]any{"jsonrpc": "2.0", "id": 0, "method": method}
	if params != nil {
		req["params"] = params
	}
	reqJSON, _ := json.Marshal(req)
	in := cassettes.Interaction{From: cassettes.FromClient, Request: reqJSON, When: &when}
	kind, arg, _ := strings.Cut(action, ":")
	fault := &cassettes.Fault{}
	respond := func(body map[string]any) {
		body["jsonrpc"], body["id"] = "2.0", 0
		msg, _ := json.Marshal(body)
		in.Response = &cassettes.Message{From: cassettes.FromServer, Message: msg}
	}
	switch kind {
	case "tool-error":
		respond(map[string]any{"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": arg}}, "isError": true}})
	case "error":
		code, msg, _ := strings.Cut(arg, ":")
		n, err := strconv.Atoi(code)
		if err != nil {
			return in, fmt.Errorf("error:%s: want error:CODE[:MESSAGE]", arg)
		}
		if msg == "" {
			msg = "scripted error"
		}
		respond(map[string]any{"error": map[string]any{"code": n, "message": msg}})
	case "delay":
		d, err := time.ParseDuration(arg)
		if err != nil {
			return in, fmt.Errorf("delay:%s: %v", arg, err)
		}
		fault.DelayMs = float64(d) / float64(time.Millisecond)
	case "no-answer":
		fault.NoAnswer = true
	case "close":
		fault.Close = true
	case "exit":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return in, fmt.Errorf("exit:%s: want exit:STATUS", arg)
		}
		fault.Exit = &n
	case "malformed":
		fault.Malformed = "line"
	case "truncated":
		fault.Malformed = "truncated"
	case "http":
		parts := strings.Split(arg, ":")
		n, err := strconv.Atoi(parts[0])
		if err != nil {
			return in, fmt.Errorf("http:%s: want http:STATUS[:Header=Value...]", arg)
		}
		fault.HTTPStatus = n
		for _, h := range parts[1:] {
			k, v, ok := strings.Cut(h, "=")
			if !ok {
				return in, fmt.Errorf("http header %q: want Header=Value", h)
			}
			if fault.HTTPHeaders == nil {
				fault.HTTPHeaders = map[string]string{}
			}
			fault.HTTPHeaders[k] = v
		}
	case "cut":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return in, fmt.Errorf("cut:%s: want cut:N", arg)
		}
		fault.CutAfterEvents = n
	case "trickle":
		n, err := strconv.Atoi(arg)
		if err != nil {
			return in, fmt.Errorf("trickle:%s: want trickle:BYTES_PER_SECOND", arg)
		}
		fault.TrickleBytesPerSec = n
	default:
		return in, fmt.Errorf("unknown action %q: want one of %s", kind, faultActions)
	}
	if in.Response == nil {
		in.Fault = fault
	}
	return in, nil
}
