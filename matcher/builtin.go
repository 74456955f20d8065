package matcher

import "strconv"

// MethodAndTool returns a Matcher that compares only the method and, for
// tools/call, the tool name: any arguments match. It implements Keyer.
func MethodAndTool() Matcher { return methodAndTool{} }

type methodAndTool struct{}

func (methodAndTool) Key(r Request) string { return r.Method + "\x00" + r.Tool() }

func (methodAndTool) Match(recorded, live Request) Result {
	if recorded.Method != live.Method {
		return Result{Differences: []Difference{{Recorded: strconv.Quote(recorded.Method), Live: strconv.Quote(live.Method)}}}
	}
	if rt, lt := recorded.Tool(), live.Tool(); rt != lt {
		return Result{Differences: []Difference{{Path: "name", Recorded: strconv.Quote(rt), Live: strconv.Quote(lt)}}}
	}
	return Result{Match: true, Exact: true}
}

// All returns a Matcher that matches when every one of ms does: the
// differences of all that miss are listed, and the match is Exact when every
// match is. It is how a custom Func adds a check to the default matcher:
//
//	matcher.All(matcher.Default(), matcher.Func(checkSignature))
func All(ms ...Matcher) Matcher { return all(ms) }

type all []Matcher

func (a all) Match(recorded, live Request) Result {
	out := Result{Match: true, Exact: true}
	for _, m := range a {
		r := m.Match(recorded, live)
		out.Exact = out.Exact && r.Exact
		if !r.Match {
			out.Match = false
			out.Differences = append(out.Differences, r.Differences...)
			if out.Diff == "" {
				out.Diff = r.Diff
			}
		}
	}
	if !out.Match {
		out.Exact = false
	}
	return out
}

// IndexKey is the key of the first matcher of the list that is a Keyer or
// an Indexer: a match of all implies a match of it.
func (a all) IndexKey(r Request) (string, bool) {
	k, ok := a.appendIndexKey(nil, r, false)
	return string(k), ok
}

func (a all) appendIndexKey(dst []byte, r Request, valid bool) ([]byte, bool) {
	for _, m := range a {
		switch m.(type) {
		case Indexer, Keyer:
			return appendIndexKey(dst, m, r, valid)
		}
	}
	return dst, false
}
