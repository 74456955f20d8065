package replayer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"

	"github.com/mcpmock/mcpmock/cassettes"
	"github.com/mcpmock/mcpmock/internal/jsonrpc"
	"github.com/mcpmock/mcpmock/matcher"
)

// index finds the recorded requests that may match a live one without
// trying the whole cassette. Recorded requests are bucketed by method and,
// for tools/call, tool name; inside a bucket, those whose effective matcher
// can key them (matcher.Indexer, matcher.Keyer) are found through a map, the
// others are tried one by one.
type index struct {
	base     matcher.Matcher               // Options.Matcher or matcher.Default()
	cassette *matcher.Config               // the cassette's "match"
	matchers []matcher.Matcher             // effective matchers, shared by equal configurations
	byConfig map[string]int                // merged configuration (JSON) → matchers index
	plain    int                           // matchers index of the cassette's own configuration, -1 until needed
	buckets  map[string]map[string]*bucket // method → tool name (tools/call) or "" → bucket
	keyBuf   []byte                        // the key being filed (add)
	lists    int                           // key lists made, the next one's id
	// exact holds, by request position, the hash of the exact key of each
	// request whose key decides its match under rules that loosen it
	// (recorded.hasExact): whether a match is exact.
	exact map[int]uint64
	seed  maphash.Seed
	seed2 maphash.Seed // with seed, the seeds of indexKey
}

// indexKey identifies an index key by two 64-bit hashes of it under
// independent random seeds, not by its text: a cassette of 100,000 calls
// then keeps 16 bytes a key and not a copy of each (90 bytes or more a
// tools/call). Two distinct keys share an indexKey with a chance of about
// 2^-128; the seeds are drawn anew by each engine, so no cassette or
// client can aim at a collision.
type indexKey [2]uint64

// keyOf is the indexKey of an index key.
func (x *index) keyOf(k []byte) indexKey {
	return indexKey{maphash.Bytes(x.seed, k), maphash.Bytes(x.seed2, k)}
}

// bucket is the recorded requests of one method and, for tools/call, tool.
type bucket struct {
	keyers []int             // matchers (indexes) with keyed requests in this bucket
	keyed  map[int]*keyTable // requests by matcher and index key
	loose  []int             // request positions tried one by one
}

// keyList is the recorded requests of one index key, held in its key
// table (keytable.go) next to its key: a lookup reads it and no object
// besides.
type keyList struct {
	// The list is laid out in 32 bytes, 48 with its key in its table.
	id int32 // the list's number in its index, from 0 (session.cursors)
	// first is the position of the first request, rest those of the
	// others (nil for none, most keys), in recorded order; times0 is the
	// times of the first, so that choosing a request recorded once reads
	// nothing but the list.
	first  int32
	times0 int
	rest   *[]int
	// plain says that a live request with this key matches every one of
	// them exactly (the key decides, no rule loosens any of them) and that
	// none is the retry of a multi-round-trip request or asks anything of
	// the client (asksNothing): the matches are the list as it is, narrow
	// keeps them all whoever the client is, and a session can keep its
	// place in it (Session.chooseIn).
	plain bool
	// filed says that the table slot holding the list is taken.
	filed bool
	// again is the index in the list of the last request with no "times",
	// the one that answers again once all are used; -1 when there is none.
	again int32
}

// len is the number of requests in the list.
func (l *keyList) len() int {
	if l.rest == nil {
		return 1
	}
	return 1 + len(*l.rest)
}

// at is the position of the list's request i.
func (l *keyList) at(i int) int {
	if i == 0 {
		return int(l.first)
	}
	return (*l.rest)[i-1]
}

// appendTo appends the list's positions to out.
func (l *keyList) appendTo(out []int) []int {
	out = append(out, int(l.first))
	if l.rest != nil {
		out = append(out, *l.rest...)
	}
	return out
}

func newIndex(base matcher.Matcher, cassetteMatch json.RawMessage) (*index, error) {
	if base == nil {
		base = matcher.Default()
	}
	cfg, err := matcher.ParseConfig(cassetteMatch)
	if err != nil {
		return nil, fmt.Errorf("replayer: the cassette's \"match\": %w", err)
	}
	return &index{base: base, cassette: cfg, byConfig: map[string]int{}, plain: -1, buckets: map[string]map[string]*bucket{}, seed: maphash.MakeSeed(), seed2: maphash.MakeSeed()}, nil
}

// bucket returns live's bucket, nil for none. name is the JSON of its
// params' name, where the caller has read it (mcp.RequestParams), or nil
// to look it up. A tool name without escapes is looked up without a copy.
func (x *index) bucket(live matcher.Request, name json.RawMessage) *bucket {
	tools := x.buckets[live.Method]
	if tools == nil || live.Method != "tools/call" {
		return tools[""]
	}
	if name == nil {
		name, _ = jsonrpc.Member(live.Params, "name")
	}
	if len(name) >= 2 && name[0] == '"' && bytes.IndexByte(name, '\\') < 0 {
		return tools[string(name[1:len(name)-1])]
	}
	return tools[live.Tool()]
}

// keyBufs are the buffers of live requests' index keys.
var keyBufs = sync.Pool{New: func() any { return new([]byte) }}

// lookup returns the key list of live's index key under matcher mi in b.
// live's params are a parsed message's, valid JSON, as a recorded
// request's are (add): the key does not check them again.
func (x *index) lookup(b *bucket, mi int, live matcher.Request) *keyList {
	buf := keyBufs.Get().(*[]byte)
	key, _ := matcher.AppendIndexKeyValid((*buf)[:0], x.matchers[mi], live)
	l := b.keyed[mi].get(x.keyOf(key))
	if cap(key) <= 64<<10 {
		*buf = key
		keyBufs.Put(buf)
	}
	return l
}

// add sets r's effective matcher and files r (whose pos is set).
func (x *index) add(r *recorded) error {
	mi, err := x.matcherFor(r.interaction.Match)
	if err != nil {
		return err
	}
	r.m = x.matchers[mi]
	tools := x.buckets[r.req.Method]
	if tools == nil {
		tools = map[string]*bucket{}
		x.buckets[r.req.Method] = tools
	}
	tool := r.req.Tool()
	b := tools[tool]
	if b == nil {
		b = &bucket{keyed: map[int]*keyTable{}}
		tools[tool] = b
	}
	k, ok := matcher.AppendIndexKeyValid(x.keyBuf[:0], r.m, r.req)
	x.keyBuf = k
	if !ok {
		b.loose = append(b.loose, r.pos)
		return nil
	}
	if !slices.Contains(b.keyers, mi) {
		b.keyers = append(b.keyers, mi)
		b.keyed[mi] = &keyTable{}
	}
	switch d := r.m.(type) {
	case matcher.Keyer:
		r.decides = true
	case matcher.KeyDecider:
		if d.KeyDecides(r.req) {
			r.decides = true
			if ek := d.ExactKey(r.req); ek != "" {
				r.hasExact = true
				if x.exact == nil {
					x.exact = map[int]uint64{}
				}
				x.exact[r.pos] = maphash.String(x.seed, ek)
			}
		}
	}
	ik := x.keyOf(k)
	t := b.keyed[mi]
	l := t.get(ik)
	if l == nil {
		t.put(ik, keyList{id: int32(x.lists), first: int32(r.pos), times0: r.times, plain: true, again: -1})
		x.lists++
		l = t.get(ik)
	} else {
		if l.rest == nil {
			l.rest = new([]int)
		}
		*l.rest = append(*l.rest, r.pos)
	}
	l.plain = l.plain && r.decides && !r.hasExact && !r.mrtrRetry && asksNothing(r.interaction)
	if r.interaction.Times == 0 {
		l.again = int32(l.len() - 1)
	}
	return nil
}

// matcherFor returns the index in x.matchers of the effective matcher of an
// interaction with the given "match": the cassette's configuration merged
// with the interaction's own. Equal configurations share one matcher; the
// common case, no "match" of its own, is found without encoding anything.
func (x *index) matcherFor(own json.RawMessage) (int, error) {
	if len(own) == 0 && x.plain >= 0 {
		return x.plain, nil
	}
	cfg := x.cassette
	if len(own) > 0 {
		c, err := matcher.ParseConfig(own)
		if err != nil {
			return 0, fmt.Errorf("\"match\": %w", err)
		}
		cfg = matcher.Merge(cfg, c)
	}
	text, _ := json.Marshal(cfg)
	mi, ok := x.byConfig[string(text)]
	if !ok {
		m, err := matcher.WithConfig(x.base, cfg)
		if err != nil {
			return 0, fmt.Errorf("\"match\": %w", err)
		}
		mi = len(x.matchers)
		x.matchers = append(x.matchers, m)
		x.byConfig[string(text)] = mi
	}
	if len(own) == 0 {
		x.plain = mi
	}
	return mi, nil
}

// asksNothing reports that a recorded request's answer asks nothing of the
// client: no server-to-client request while it was pending, no
// input_required result (2026-07-28). Which of several such answers a
// client gets does not depend on its capabilities.
func asksNothing(in *cassettes.Interaction) bool {
	for _, x := range in.Exchange {
		if x.From != cassettes.FromServer || x.Message == nil {
			continue
		}
		if k, err := jsonrpc.CheckValid(x.Message); err != nil || k == jsonrpc.KindRequest {
			return false
		}
	}
	return in.Response == nil || !bytes.Contains(in.Response.Message, []byte(`"input_required"`))
}

// candidates returns the positions of the recorded requests that may match
// live, in recorded order.
func (x *index) candidates(live matcher.Request) []int {
	out, _ := x.search(live, nil, false)
	return out
}

// search is candidates, with the JSON of live's params' name where the
// caller has read it (bucket); with wantPlain, when the candidates are one
// plain key list (see keyList), it returns that list instead.
func (x *index) search(live matcher.Request, name json.RawMessage, wantPlain bool) ([]int, *keyList) {
	b := x.bucket(live, name)
	if b == nil {
		return nil, nil
	}
	if len(b.loose) == 0 && len(b.keyers) == 1 {
		l := x.lookup(b, b.keyers[0], live)
		switch {
		case l == nil:
			return nil, nil
		case wantPlain && l.plain:
			return nil, l
		}
		return l.appendTo(nil), nil
	}
	out := slices.Clone(b.loose)
	for _, mi := range b.keyers {
		if l := x.lookup(b, mi, live); l != nil {
			out = l.appendTo(out)
		}
	}
	if len(b.keyers) > 1 || len(b.loose) > 0 {
		slices.Sort(out)
	}
	return out, nil
}

// choose finds the recorded request that answers live: among the matches,
// exact ones before looser ones, then the first unused in recorded order;
// once all are used, the last one again (unless strict or limited by times).
func (s *session) choose(live matcher.Request) (*recorded, *Miss) {
	e := s.e
	// A list request is narrowed to its generation (narrow); any other
	// request with a plain key list is answered from it directly, at a
	// cost that does not grow with the number of equal recorded requests.
	cands, plain := e.index.search(live, s.paramsOf(live.Params).Name, s.plainOK(live)) // protocol.go
	if plain != nil {
		if r := s.chooseIn(plain); r != nil {
			return r, nil
		}
		return nil, e.newMiss(live, true)
	}
	var matches, loose []int
	var liveExact map[matcher.Matcher]uint64 // exact-key hash of live, per matcher
	for _, n := range cands {
		r := &e.requests[n]
		if r.decides {
			// Found by an equal key that decides the match; exact unless
			// a rule ignored a difference.
			want, rules := e.index.exact[n], r.hasExact
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
		used, times := s.used.get(n), e.requests[n].times
		switch {
		case times < 0, times > 0 && used < times, times == 0 && used == 0:
			s.used.add(n)
			return &e.requests[n], nil
		case times == 0 && !e.opts.Strict:
			again = n
		}
	}
	if again >= 0 {
		s.used.add(again)
		return &e.requests[again], nil
	}
	return nil, e.newMiss(live, len(matches) > 0)
}

// chooseIn is choose for a plain key list: the requests all match, in
// order, and narrow would keep them all (none is a multi-round-trip retry).
// The session keeps its place in the list: the requests before it can no
// longer answer first (each was used up, and uses only grow), so a call
// costs the same however many times the request was recorded. It returns
// nil when every request is used up.
func (s *session) chooseIn(l *keyList) *recorded {
	e := s.e
	s.mu.Lock()
	defer s.mu.Unlock()
	// A list of one request (the common case: a call recorded once) needs
	// no place: its request is tried each time.
	n := l.len()
	i := 0
	if n > 1 {
		i = s.cursors.get(int(l.id))
	}
	for ; i < n; i++ {
		p, times := int(l.first), l.times0
		if i > 0 {
			p = (*l.rest)[i-1]
			times = e.requests[p].times
		}
		if used := s.used.get(p); times < 0 || times > 0 && used < times || times == 0 && used == 0 {
			s.used.add(p)
			if n > 1 {
				s.cursors.set(int(l.id), i)
			}
			return &e.requests[p]
		}
	}
	if n > 1 {
		s.cursors.set(int(l.id), i)
	}
	if l.again >= 0 && !e.opts.Strict {
		p := l.at(int(l.again))
		s.used.add(p)
		return &e.requests[p]
	}
	return nil
}
