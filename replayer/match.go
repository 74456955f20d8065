package replayer

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mcpmock/mcpmock/matcher"
)

// index finds the recorded requests that may match a live one without
// trying the whole cassette. Recorded requests are bucketed by method and,
// for tools/call, tool name; inside a bucket, those whose effective matcher
// can key them (matcher.Indexer, matcher.Keyer) are found through a map, the
// others are tried one by one.
type index struct {
	base     matcher.Matcher   // Options.Matcher or matcher.Default()
	cassette *matcher.Config   // the cassette's "match"
	matchers []matcher.Matcher // effective matchers, shared by equal configurations
	byConfig map[string]int    // merged configuration (JSON) → matchers index
	buckets  map[string]*bucket
	// decides[pos] says that an equal index key alone makes the recorded
	// request at pos match live (matcher.Keyer, matcher.KeyDecider);
	// exact[pos], for a KeyDecider, is the hash of its exact key, which
	// says whether the match is exact.
	decides map[int]bool
	exact   map[int]uint64
	seed    maphash.Seed
}

type bucket struct {
	keyers []int            // matchers (indexes) with keyed requests in this bucket
	keyed  map[string][]int // matcher index + "\x00" + key → request positions
	loose  []int            // request positions tried one by one
}

func newIndex(base matcher.Matcher, cassetteMatch json.RawMessage) (*index, error) {
	if base == nil {
		base = matcher.Default()
	}
	cfg, err := matcher.ParseConfig(cassetteMatch)
	if err != nil {
		return nil, fmt.Errorf("replayer: the cassette's \"match\": %w", err)
	}
	return &index{base: base, cassette: cfg, byConfig: map[string]int{}, buckets: map[string]*bucket{}, decides: map[int]bool{}, exact: map[int]uint64{}, seed: maphash.MakeSeed()}, nil
}

func bucketKey(r matcher.Request) string { return r.Method + "\x00" + r.Tool() }

// add sets r's effective matcher and files r (whose pos is set).
func (x *index) add(r *recorded) error {
	cfg := x.cassette
	if len(r.interaction.Match) > 0 {
		own, err := matcher.ParseConfig(r.interaction.Match)
		if err != nil {
			return fmt.Errorf("\"match\": %w", err)
		}
		cfg = matcher.Merge(cfg, own)
	}
	text, _ := json.Marshal(cfg)
	mi, ok := x.byConfig[string(text)]
	if !ok {
		m, err := matcher.WithConfig(x.base, cfg)
		if err != nil {
			return fmt.Errorf("\"match\": %w", err)
		}
		mi = len(x.matchers)
		x.matchers = append(x.matchers, m)
		x.byConfig[string(text)] = mi
	}
	r.m = x.matchers[mi]
	bk := bucketKey(r.req)
	b := x.buckets[bk]
	if b == nil {
		b = &bucket{keyed: map[string][]int{}}
		x.buckets[bk] = b
	}
	key, ok := indexKey(r.m, r.req)
	if !ok {
		b.loose = append(b.loose, r.pos)
		return nil
	}
	if !slices.Contains(b.keyers, mi) {
		b.keyers = append(b.keyers, mi)
	}
	k := fmt.Sprint(mi) + "\x00" + key
	b.keyed[k] = append(b.keyed[k], r.pos)
	switch d := r.m.(type) {
	case matcher.Keyer:
		x.decides[r.pos] = true
	case matcher.KeyDecider:
		if d.KeyDecides(r.req) {
			x.decides[r.pos] = true
			if ek := d.ExactKey(r.req); ek != "" {
				x.exact[r.pos] = maphash.String(x.seed, ek)
			}
		}
	}
	return nil
}

func indexKey(m matcher.Matcher, r matcher.Request) (string, bool) {
	switch x := m.(type) {
	case matcher.Indexer:
		return x.IndexKey(r)
	case matcher.Keyer:
		return x.Key(r), true
	}
	return "", false
}

// candidates returns the positions of the recorded requests that may match
// live, in recorded order.
func (x *index) candidates(live matcher.Request) []int {
	b := x.buckets[bucketKey(live)]
	if b == nil {
		return nil
	}
	out := slices.Clone(b.loose)
	for _, mi := range b.keyers {
		key, _ := indexKey(x.matchers[mi], live)
		out = append(out, b.keyed[fmt.Sprint(mi)+"\x00"+key]...)
	}
	if len(b.keyers) > 1 || len(b.loose) > 0 {
		slices.Sort(out)
	}
	return out
}

// choose finds the recorded request that answers live: among the matches,
// exact ones before looser ones, then the first unused in recorded order;
// once all are used, the last one again (unless strict or limited by times).
func (s *Session) choose(live matcher.Request) (*recorded, *Miss) {
	e := s.e
	var matches, loose []int
	var liveExact map[matcher.Matcher]uint64 // exact-key hash of live, per matcher
	for _, n := range e.index.candidates(live) {
		r := e.requests[n]
		if e.index.decides[n] {
			// Found by an equal key that decides the match; exact unless
			// a rule ignored a difference.
			want, rules := e.index.exact[n]
			if !rules {
				matches = append(matches, n)
				continue
			}
			d := r.m.(matcher.KeyDecider)
			if liveExact == nil {
				liveExact = map[matcher.Matcher]uint64{}
			}
			h, ok := liveExact[r.m]
			if !ok {
				h = maphash.String(e.index.seed, d.ExactKey(live))
				liveExact[r.m] = h
			}
			if h == want {
				matches = append(matches, n)
			} else {
				loose = append(loose, n)
			}
			continue
		}
		res := r.m.Match(r.req, live)
		switch {
		case res.Match && res.Exact:
			matches = append(matches, n)
		case res.Match:
			loose = append(loose, n)
		}
	}
	matches = s.narrow(live, append(matches, loose...))
	s.mu.Lock()
	defer s.mu.Unlock()
	again := -1
	for _, n := range matches {
		used, times := s.used[n], e.requests[n].interaction.Times
		switch {
		case times < 0, times > 0 && used < times, times == 0 && used == 0:
			s.used[n]++
			return e.requests[n], nil
		case times == 0 && !e.opts.Strict:
			again = n
		}
	}
	if again >= 0 {
		s.used[again]++
		return e.requests[again], nil
	}
	return nil, e.explain(live, len(matches) > 0)
}

// maxCandidates is how many near misses a Miss lists.
const maxCandidates = 3

// explain ranks the recorded requests of the same method (of the same tool,
// when the cassette has calls of it) by how far they are from live, and
// says what rule would have accepted the closest one.
func (e *Engine) explain(live matcher.Request, exhausted bool) *Miss {
	m := &Miss{Method: live.Method, Tool: live.Tool(), Exhausted: exhausted}
	idx := e.byMethod[live.Method]
	m.Recorded = len(idx) > 0
	if !m.Recorded || exhausted {
		return m
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
	type ranked struct {
		c    Candidate
		dist int
	}
	var all []ranked
	for _, n := range idx {
		r := e.requests[n]
		res := r.m.Match(r.req, live)
		c := Candidate{Interaction: r.index + 1, Tool: r.req.Tool(), Diff: res.Diff, diffs: res.Differences, pos: n}
		for _, d := range res.Differences {
			c.Differences = append(c.Differences, d.String())
		}
		all = append(all, ranked{c, res.Distance()})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].dist < all[j].dist })
	for i := 0; i < len(all) && i < maxCandidates; i++ {
		m.Candidates = append(m.Candidates, all[i].c)
	}
	m.Hint = e.hint(live, m.Candidates[0])
	return m
}

// hint says which ignore rule would have made live match the candidate,
// after checking that it would.
func (e *Engine) hint(live matcher.Request, c Candidate) string {
	var paths []string
	for _, d := range c.diffs {
		if d.Path == "" || d.Path == "name" {
			return "" // another method or tool: no rule should paper over that
		}
		paths = append(paths, d.Path)
	}
	if len(paths) == 0 {
		return ""
	}
	r := e.requests[c.pos]
	loose, err := matcher.WithConfig(r.m, &matcher.Config{Ignore: paths})
	if err != nil || !loose.Match(r.req, live).Match {
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
