package replayer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// This file explains a miss: the closest recorded requests, how each
// differs, and the rule that would have accepted the closest. Matching
// leaves the explanation to settle, which a front end calls off the path of
// other requests (stdio: in the goroutine of the request; HTTP: under the
// request's context, so that a client that leaves stops it). The work is
// bounded (BenchmarkMiss: at most 50 ms at a 1 MB request against 1,000
// recorded calls, linear in both): a sketch of every candidate ranks them
// without comparing any in full, only the best maxDiffed are compared, and
// requests larger than maxExplained (16 KB) are compared abbreviated
// (matcher.Abbreviate).

const (
	// maxCandidates is how many near misses a Miss lists.
	maxCandidates = 3
	// maxDiffed is how many recorded requests, the closest by their
	// sketch, a miss compares with the matcher.
	maxDiffed = 2 * maxCandidates
	// maxExplained is the size of params beyond which a miss compares
	// the abbreviated requests.
	maxExplained = 16 << 10
	// maxDifferences is how many differences a candidate lists.
	maxDifferences = 20
	// maxDiffBytes bounds a candidate's diff.
	maxDiffBytes = 8 << 10
)

// truncated ends a cut list of differences or a cut diff.
const truncated = "(diff truncated)"

// newMiss is the miss of live, to be explained by settle.
func (e *Engine) newMiss(live matcher.Request, exhausted bool) *Miss {
	return &Miss{Method: live.Method, Tool: live.Tool(), Exhausted: exhausted, Recorded: len(e.byMethod[live.Method]) > 0, live: live, pending: true}
}

// pending reports that the plan answers a miss that settle has still to
// explain.
func (p *answerPlan) pending() bool { return p != nil && p.Miss != nil && p.Miss.pending }

// handleContext is Handle with the miss, if any, explained under ctx.
func (s *session) handleContext(ctx context.Context, msg *jsonrpc.Message) *answerPlan {
	plan := s.planFor(msg)
	s.settle(ctx, msg, plan)
	return plan
}

// settle explains the plan's pending miss, stopping early when ctx ends,
// puts the explanation into the answer, and calls OnMiss and OnRequest. It
// does nothing for any other plan.
func (s *session) settle(ctx context.Context, msg *jsonrpc.Message, plan *answerPlan) {
	if !plan.pending() {
		return
	}
	m := plan.Miss
	// The preliminary answer, as recordedPlan built it: the steps that
	// still carry it (a fault may have replaced or cut it) get the
	// explained one.
	prelim := jsonrpc.ErrorResponse(m.id, m.rpcError())
	s.e.explain(ctx, m)
	m.pending, m.live = false, matcher.Request{}
	if s.e.opts.OnMiss != nil {
		s.e.opts.OnMiss(*m)
	}
	var answer []byte
	for i := range plan.Steps {
		if st := &plan.Steps[i]; st.Kind == stepSend && st.Response && bytes.Equal(st.Message, prelim) {
			if answer == nil {
				answer = jsonrpc.ErrorResponse(m.id, m.rpcError())
			}
			st.Message = answer
		}
	}
	s.onRequest(msg, plan)
}

// explained is a recorded request compared with the live one: the pair
// that was compared (abbreviated or not) and its distance.
type explained struct {
	c         Candidate // without what is shown: Engine.candidate adds it
	res       matcher.Result
	dist      int
	rec, live matcher.Request
	cut       bool // the pair was abbreviated and something was cut
}

// explain ranks the recorded requests of the miss's method (of its tool,
// when the cassette has calls of it) by how far they are from the live
// one, and says what rule would have accepted the closest. It stops early,
// with what it has, when ctx ends.
func (e *Engine) explain(ctx context.Context, m *Miss) {
	live := m.live
	idx := e.byMethod[live.Method]
	if !m.Recorded || m.Exhausted {
		return
	}
	if m.Tool != "" {
		var same []int
		for _, n := range idx {
			if e.requests[n].req.Tool() == m.Tool {
				same = append(same, n)
			}
		}
		if len(same) > 0 {
			idx = same
		}
	}
	var short matcher.Request
	var shortCut, shortDone bool
	abbreviated := func() (matcher.Request, bool) {
		if !shortDone {
			short, shortCut = matcher.Abbreviate(live)
			shortDone = true
		}
		return short, shortCut
	}
	if len(idx) > maxDiffed {
		s, _ := abbreviated()
		idx = e.closest(ctx, s, len(live.Params), idx)
	}
	var all []explained
	for _, n := range idx {
		if ctx.Err() != nil {
			break
		}
		r := &e.requests[n]
		x := explained{rec: r.req, live: live}
		if len(live.Params) > maxExplained || len(r.req.Params) > maxExplained {
			var rcut, lcut bool
			x.rec, rcut = matcher.Abbreviate(r.req)
			x.live, lcut = abbreviated()
			x.cut = rcut || lcut
		}
		x.res = r.m.Match(x.rec, x.live)
		x.c = Candidate{Interaction: r.index + 1, Tool: r.req.Tool(), diffs: x.res.Differences, pos: n}
		x.dist = x.res.Distance()
		all = append(all, x)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].dist < all[j].dist })
	for i := 0; i < len(all) && i < maxCandidates; i++ {
		m.Candidates = append(m.Candidates, e.candidate(all[i]))
	}
	if len(all) > 0 && ctx.Err() == nil {
		m.Hint = e.hint(all[0])
	}
}

// candidate is x as a miss shows it: its differences and its diff, with
// the secrets of both requests hidden (shown).
func (e *Engine) candidate(x explained) Candidate {
	c := x.c
	s := shown(e.requests[c.pos].m, x.rec, x.live, x.res)
	c.Diff = boundDiff(s.diff, x.cut)
	for i, d := range s.diffs {
		if i == maxDifferences {
			c.Differences = append(c.Differences, fmt.Sprintf("%d more differences %s", len(s.diffs)-i, truncated))
			break
		}
		c.Differences = append(c.Differences, d.String())
	}
	if x.res.Match {
		// Only the abbreviated requests match: they differ in what was
		// cut.
		c.Differences = []string{"the requests differ in a part that the explanation cut " + truncated}
	}
	return c
}

// boundDiff cuts a diff to maxDiffBytes, at a line end, and says so; cut
// says that the compared requests were abbreviated.
func boundDiff(diff string, cut bool) string {
	if diff == "" {
		return ""
	}
	if len(diff) > maxDiffBytes {
		i := strings.LastIndexByte(diff[:maxDiffBytes], '\n')
		if i < 0 {
			i = maxDiffBytes
		}
		return diff[:i] + "\n" + truncated
	}
	if cut {
		return strings.TrimRight(diff, "\n") + "\n" + truncated[:len(truncated)-1] + ": long values are shown cut, with their size and a hash of the rest)"
	}
	return diff
}

// sketch is what a recorded request is ranked by before any is compared:
// the tool, each compared member (of a tools/call's arguments, else of the
// params without _meta) with a hash of its abbreviated value, and the size
// of the params.
type sketch struct {
	tool    string
	members []sketched // by name
	size    int
}

type sketched struct {
	name string // quoted
	hash uint64
}

// sketchOf sketches an abbreviated request (canonical: equal values have
// equal text) whose params had size bytes.
func (e *Engine) sketchOf(short matcher.Request, size int) sketch {
	s := sketch{tool: short.Tool(), size: size}
	part := short.Params
	if short.Method == "tools/call" {
		part, _ = jsonrpc.Member(short.Params, "arguments")
	}
	err := jsonrpc.EachMemberRaw(part, func(quoted, value []byte) error {
		if short.Method != "tools/call" && string(quoted) == `"_meta"` {
			return nil
		}
		s.members = append(s.members, sketched{string(quoted), maphash.Bytes(e.index.seed, value)})
		return nil
	})
	if err != nil {
		s.members = []sketched{{"", maphash.Bytes(e.index.seed, part)}}
	}
	slices.SortFunc(s.members, func(a, b sketched) int { return strings.Compare(a.name, b.name) })
	return s
}

// distance counts the members in which two sketches differ (present in
// one only, or with another value), and 100 for another tool, as
// matcher.Result.Distance weighs a difference.
func (s sketch) distance(o sketch) int {
	d := 0
	if s.tool != o.tool {
		d += 100
	}
	i, j := 0, 0
	for i < len(s.members) && j < len(o.members) {
		switch c := strings.Compare(s.members[i].name, o.members[j].name); {
		case c < 0:
			d, i = d+1, i+1
		case c > 0:
			d, j = d+1, j+1
		default:
			if s.members[i].hash != o.members[j].hash {
				d++
			}
			i, j = i+1, j+1
		}
	}
	return d + len(s.members) - i + len(o.members) - j
}

// closest returns the maxDiffed recorded requests of idx closest to the
// live one by their sketches (then by size, then in recorded order),
// closest first. It stops early when ctx ends.
func (e *Engine) closest(ctx context.Context, live matcher.Request, size int, idx []int) []int {
	type scored struct{ n, dist, delta int }
	ls := e.sketchOf(live, size)
	best := make([]scored, 0, maxDiffed+1)
	for _, n := range idx {
		if ctx.Err() != nil {
			break
		}
		r := &e.requests[n]
		short, _ := matcher.Abbreviate(r.req)
		x := scored{n: n, dist: ls.distance(e.sketchOf(short, len(r.req.Params))), delta: abs(len(r.req.Params) - size)}
		at := sort.Search(len(best), func(i int) bool {
			return best[i].dist > x.dist || best[i].dist == x.dist && best[i].delta > x.delta
		})
		if at < maxDiffed {
			best = slices.Insert(best, at, x)
			best = best[:min(len(best), maxDiffed)]
		}
	}
	out := make([]int, len(best))
	for i, x := range best {
		out[i] = x.n
	}
	return out
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// hint says which ignore rule would have made the live request match the
// candidate, after checking that it would (on the compared pair: for
// abbreviated requests, what was not cut is equal when its hash is). It
// says nothing when a difference lies in the marker of what was cut.
func (e *Engine) hint(x explained) string {
	var paths []string
	for _, d := range x.c.diffs {
		if d.Path == "" || d.Path == "name" {
			return "" // another method or tool: no rule should paper over that
		}
		if x.cut && (strings.Contains(d.Path, "…") || strings.HasPrefix(d.Recorded, `"…(`) || strings.HasPrefix(d.Live, `"…(`)) {
			return "" // the path leads into what was cut
		}
		paths = append(paths, d.Path)
	}
	if len(paths) == 0 || len(x.c.diffs) > maxDifferences {
		return ""
	}
	loose, err := matcher.WithConfig(e.requests[x.c.pos].m, &matcher.Config{Ignore: paths})
	if err != nil || !loose.Match(x.rec, x.live).Match {
		return ""
	}
	flags := make([]string, len(paths))
	for i, p := range paths {
		flags[i] = "--match-ignore " + shellQuote(p)
	}
	rule, _ := json.Marshal(map[string][]string{"ignore": paths})
	return fmt.Sprintf("to accept this, ignore %s: %s, or \"match\": %s in the cassette", strings.Join(paths, ", "), strings.Join(flags, " "), rule)
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:-]+$`)

func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Advice is what would make a missed request match, for a front end that
// words its hint in its own terms (Hint is worded for mcpmock's command
// line). The zero Advice knows no rule that would: the cassette holds no
// such request.
type Advice struct {
	// Ignore are the paths whose ignoring would make the closest recorded
	// request match, and no other close recorded request that differs from
	// it: what a "match" rule may ignore.
	Ignore []string
	// Apart are the paths in which the closest recorded request differs
	// from the live one, when ignoring them would make the live request
	// match another close recorded request of its method and tool as well,
	// one that differs from the closest in them: they tell the recorded
	// calls apart, and ignoring them would answer the live request with
	// another call's answer. Ignore is then empty.
	Apart []string
}

// Advice returns what would make the request match (see Advice), from the
// closest candidates that explain compared. It is empty when the method was
// never recorded, when every match was used up (Exhausted), and when no
// ignore rule would accept the request.
func (m *Miss) Advice() Advice {
	// explain sets Hint exactly when ignoring the paths in which the
	// closest candidate differs accepts the request.
	if m.Hint == "" || len(m.Candidates) == 0 {
		return Advice{}
	}
	c := m.Candidates[0]
	paths := make([]string, len(c.diffs))
	for i, d := range c.diffs {
		paths[i] = d.Path
	}
	var a Advice
	for _, o := range m.Candidates[1:] {
		if o.Tool != c.Tool || !within(o.diffs, paths) {
			continue // ignoring the paths would not accept o: it stays apart
		}
		for _, d := range c.diffs {
			if differsAt(c, o, d) && !slices.Contains(a.Apart, d.Path) {
				a.Apart = append(a.Apart, d.Path)
			}
		}
	}
	if len(a.Apart) == 0 {
		a.Ignore = paths
	}
	return a
}

// within reports whether every difference lies at one of the paths or
// inside it.
func within(diffs []matcher.Difference, paths []string) bool {
	for _, d := range diffs {
		if !slices.ContainsFunc(paths, func(p string) bool { return d.Path == p || strings.HasPrefix(d.Path, p+".") }) {
			return false
		}
	}
	return true
}

// differsAt reports whether the recorded requests of candidates c and o
// differ at d's path, where c differs from the live request as d says: o
// differs from c there when it agrees with the live request (it has no
// difference at the path) or differs from it with another recorded value.
func differsAt(c, o Candidate, d matcher.Difference) bool {
	for _, od := range o.diffs {
		if od.Path == d.Path {
			return od.Recorded != d.Recorded
		}
	}
	return true
}
