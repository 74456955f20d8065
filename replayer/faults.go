package replayer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file is the scripted half of the engine: interactions with "when" or
// "fault" (from overlays, from the cassette itself, or built in Go) are tried
// before the recording, counted per session, and turn an answer into a
// failure: an error, a delay, no answer, a broken line, an HTTP status, a cut
// stream, a closed connection.

// Latency says how long replayed answers take. The zero value answers at
// once.
type Latency struct {
	// Factor delays each answer by its recorded latency times Factor (1
	// replays the recorded pacing).
	Factor float64
	// Fixed delays each answer by this much.
	Fixed time.Duration
}

func (l Latency) delay(recorded time.Duration) time.Duration {
	return l.Fixed + time.Duration(float64(recorded)*l.Factor)
}

// ExitError is returned by Serve when a scripted fault made the server exit
// with a status (cassettes.Fault.Exit).
type ExitError struct{ Status int }

func (e *ExitError) Error() string {
	return fmt.Sprintf("replayer: a scripted fault ended the server with status %d", e.Status)
}

// scripted is an interaction that applies on conditions.
type scripted struct {
	source string // for messages: "overlay.json interaction 2"
	index  int    // position in Engine.scripted
	req    matcher.Request
	in     *cassettes.Interaction
	when   cassettes.When
	// m, when the interaction has a "match", matches live requests with
	// those rules instead of by containment.
	m matcher.Matcher
	// overlay and position say where it comes from for Scripts: the
	// 1-based overlay (0: the cassette) and interaction.
	overlay, position int
	fired             atomic.Int64 // calls it answered, over all sessions
}

// Script is a scripted interaction of an engine (an overlay's, or one of
// the cassette's with "when" or "fault") and how often it fired.
type Script struct {
	// Overlay is the 1-based position of its overlay in Options.Overlays,
	// 0 for the cassette itself; Interaction is its 1-based position there.
	Overlay, Interaction int
	// Method and, for tools/call, Tool are what it scripts.
	Method, Tool string
	// Fired counts the calls it answered, over all sessions.
	Fired int64
}

// Scripts returns the engine's scripted interactions in the order they are
// tried, with how often each fired so far: one that never fired in a whole
// run is a script that a test meant to exercise and did not.
func (e *Engine) Scripts() []Script {
	out := make([]Script, len(e.scripted))
	for i, sc := range e.scripted {
		out[i] = Script{Overlay: sc.overlay, Interaction: sc.position, Method: sc.req.Method, Tool: sc.req.Tool(), Fired: sc.fired.Load()}
	}
	return out
}

// scriptState is a session's counters for scripted interactions.
type scriptState struct {
	mu     sync.Mutex // guards the fields below
	counts map[int]int
	recent map[int][]time.Time // matching calls within rate-limit windows
	state  string
	rng    *rand.Rand
}

// addScripted registers the client requests of a cassette as scripted
// interactions: all of them (an overlay), or onlyScripted those with "when"
// or "fault".
func (e *Engine) addScripted(c *cassettes.Cassette, name string, overlay int, onlyScripted bool) error {
	for i := range c.Interactions {
		in := &c.Interactions[i]
		if in.Request == nil || in.From != cassettes.FromClient || (onlyScripted && !in.Scripted()) {
			continue
		}
		msg, err := jsonrpc.Parse(in.Request)
		if err != nil {
			return fmt.Errorf("replayer: %s interaction %d: %w", name, i+1, err)
		}
		sc := &scripted{source: fmt.Sprintf("%s interaction %d", name, i+1), index: len(e.scripted),
			req: matcher.Request{Method: msg.Method, Params: msg.Params}, in: in, overlay: overlay, position: i + 1}
		if in.When != nil {
			sc.when = *in.When
		}
		if len(in.Match) > 0 {
			cfg, err := matcher.ParseConfig(in.Match)
			if err == nil {
				sc.m, err = matcher.WithConfig(e.opts.Matcher, cfg)
			}
			if err != nil {
				return fmt.Errorf("replayer: %s: \"match\": %w", sc.source, err)
			}
		}
		e.scripted = append(e.scripted, sc)
	}
	return nil
}

// trigger returns the first scripted interaction that matches live and
// whose conditions hold for this call, counting the call for every
// scripted interaction that matches.
func (s *session) trigger(live matcher.Request) *scripted {
	if len(s.e.scripted) == 0 {
		return nil
	}
	st := &s.script
	st.mu.Lock()
	defer st.mu.Unlock()
	now := s.e.now()
	var chosen *scripted
	for _, sc := range s.e.scripted {
		if sc.req.Method != live.Method || !sc.matches(live) {
			continue
		}
		st.counts[sc.index]++
		n := st.counts[sc.index]
		w := sc.when
		if w.RateLimit != nil {
			window := time.Duration(w.RateLimit.WindowMs * float64(time.Millisecond))
			kept := st.recent[sc.index][:0]
			for _, t := range st.recent[sc.index] {
				if now.Sub(t) < window {
					kept = append(kept, t)
				}
			}
			st.recent[sc.index] = append(kept, now)
		}
		if chosen != nil {
			continue
		}
		ok := (w.Nth == 0 || n == w.Nth) &&
			(w.Every == 0 || n%w.Every == 0) &&
			(w.From == 0 || n >= w.From) &&
			(w.To == 0 || n <= w.To) &&
			(w.State == st.state) &&
			(w.RateLimit == nil || len(st.recent[sc.index]) > w.RateLimit.Calls)
		if ok && w.Probability > 0 {
			ok = st.rng.Float64() < w.Probability
		}
		if ok {
			chosen = sc
			sc.fired.Add(1)
			if w.SetState != "" {
				st.state = w.SetState
			}
		}
	}
	return chosen
}

// jitter draws a random delay up to max from the session's seeded source.
func (s *session) jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	s.script.mu.Lock()
	defer s.script.mu.Unlock()
	return time.Duration(s.script.rng.Int64N(int64(max)))
}

// applyFault turns a plan into its scripted failure. recorded is the
// recorded latency of the answer, for LatencyFactor.
func (s *session) applyFault(plan *answerPlan, f *cassettes.Fault, recorded time.Duration, id jsonrpc.ID) *answerPlan {
	if f == nil {
		return plan
	}
	delay := f.Delay() + time.Duration(float64(recorded)*f.LatencyFactor) + s.jitter(time.Duration(f.JitterMs*float64(time.Millisecond)))
	out := &answerPlan{Interaction: plan.Interaction, Miss: plan.Miss, CutAfter: f.CutAfterEvents, Trickle: f.TrickleBytesPerSec}
	if delay > 0 {
		out.Steps = append(out.Steps, step{Kind: stepDelay, Delay: delay})
	}
	for _, st := range plan.Steps {
		if !st.Response {
			out.Steps = append(out.Steps, st)
			continue
		}
		switch {
		case f.NoAnswer:
			continue
		case f.Exit != nil:
			st = step{Kind: stepExit, ExitStatus: *f.Exit}
		case f.Close:
			st = step{Kind: stepClose}
		case f.HTTPStatus != 0:
			st = step{Kind: stepHTTPStatus, Response: true, Status: f.HTTPStatus, Headers: f.HTTPHeaders, Body: f.HTTPBody,
				Message: jsonrpc.ErrorResponse(id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("mcpmock: scripted HTTP status %d %s (this transport is not HTTP)", f.HTTPStatus, f.HTTPBody)})}
		case f.Malformed == "line":
			st.Message = []byte(`{"jsonrpc":"2.0", this line is not JSON (a malformed answer scripted by mcpmock)`)
		case f.Malformed == "truncated":
			st.Message = st.Message[:len(st.Message)/2]
		}
		out.Steps = append(out.Steps, st)
	}
	return out
}

// answerScripted builds the plan of a scripted interaction that has its own
// response (or, without one, the recording's answer).
func (s *session) answerScripted(msg *jsonrpc.Message, sc *scripted, recordedPlan func() *answerPlan) (*answerPlan, time.Duration) {
	if sc.in.Response == nil && len(sc.in.Exchange) == 0 {
		plan := recordedPlan()
		return plan, s.recordedLatency(plan.Interaction)
	}
	plan := s.answerWith(msg, sc.in, 0, nil)
	return plan, latencyOf(sc.in)
}

func (s *session) recordedLatency(interaction int) time.Duration {
	if interaction <= 0 || interaction > len(s.e.cassette.Interactions) {
		return 0
	}
	return latencyOf(&s.e.cassette.Interactions[interaction-1])
}

func latencyOf(in *cassettes.Interaction) time.Duration {
	if in.Response == nil {
		return 0
	}
	return time.Duration(float64(in.Response.AtMs-in.AtMs) * float64(time.Millisecond))
}

// matches reports whether a live request is one the scripted interaction
// applies to: by its "match" rules when it has some, else by containment.
func (sc *scripted) matches(live matcher.Request) bool {
	if sc.m != nil {
		return sc.m.Match(sc.req, live).Match
	}
	return subsetOf(sc.req.Params, live.Params)
}

// subsetOf reports whether the pattern's params are contained in the live
// ones: every member of a pattern object is in the live object with a
// contained value; arrays and scalars are equal (numbers as numbers).
func subsetOf(pattern, live json.RawMessage) bool {
	p, ok := matcher.Decode(pattern)
	if !ok {
		return false
	}
	l, ok := matcher.Decode(live)
	if !ok {
		return false
	}
	return contains(p, l)
}

func contains(p, l any) bool {
	switch pv := p.(type) {
	case map[string]any:
		lv, ok := l.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range pv {
			if k == "_meta" {
				continue
			}
			if !contains(v, lv[k]) {
				return false
			}
		}
		return true
	case []any:
		lv, ok := l.([]any)
		if !ok || len(lv) != len(pv) {
			return false
		}
		for i := range pv {
			if !contains(pv[i], lv[i]) {
				return false
			}
		}
		return true
	}
	return len(matcher.Compare("", p, l)) == 0
}
