package cassettes

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A pattern is a compiled redaction pattern. The default patterns each
// have a finder: a fast scan (bytes.Index and IndexByte, vectorised) for
// the positions where a match can start, after which the pattern, anchored,
// runs from each such position only. A string that holds no candidate costs
// a few scans of its bytes, however long it is (a 10 MiB base64 image is
// not run through eleven regular expressions), and the matches found are
// those of the regular expression over the whole string: every match starts
// at a candidate, candidates are tried in order, and the anchored pattern
// gives at a start the match that the whole-string search gives there.
type pattern struct {
	re *regexp.Regexp
	// anchored is `^(?:re)`, used from each candidate; nil for a pattern
	// without a finder, which runs over the whole string.
	anchored *regexp.Regexp
	// candidates returns the possible match starts in s, in order, each
	// with where to look again if the match there fails.
	candidates func(s string) []candidate
	// may is false when s holds no candidate: a scan that allocates
	// nothing and is true for every string that holds one (most messages
	// hold none, and are looked at with may alone).
	may func(s string) bool
	// wordStart says the pattern starts with \b before a word character:
	// a candidate after a word character is no match.
	wordStart bool
	// prefix, for a pattern without a finder, is a literal every match
	// starts with ("" when none).
	prefix string
	// needs are bytes of which every match holds one at least ("" when
	// unknown): a short string with none of them holds no match
	// (Redactor.short).
	needs string
}

type candidate struct{ start, resume int }

func compilePattern(expr string) (*pattern, error) {
	if p, ok := compiledPatterns.Load(expr); ok {
		return p.(*pattern), nil
	}
	p, err := compileNewPattern(expr)
	if err != nil {
		return nil, err
	}
	p2, _ := compiledPatterns.LoadOrStore(expr, p)
	return p2.(*pattern), nil
}

// compiledPatterns holds every pattern compiled in the process, by its
// expression: a pattern never changes once compiled, and compiling the
// default ones (eleven regular expressions, most twice) was a tenth of
// the CPU that `mcpmock record` spends before the first message, where a
// recorder builds two redactors and the command one or two more.
var compiledPatterns sync.Map // string → *pattern

func compileNewPattern(expr string) (*pattern, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	p := &pattern{re: re}
	if f, ok := finders[expr]; ok {
		p.anchored = regexp.MustCompile(`^(?:` + expr + `)`)
		p.candidates, p.wordStart, p.may, p.needs = f.candidates, f.wordStart, f.may, f.needs
		return p, nil
	}
	if prefix, _ := re.LiteralPrefix(); prefix != "" {
		p.prefix, p.needs = prefix, prefix[:1]
	}
	return p, nil
}

// mayMatch reports whether s holds a place where a match may start.
func (p *pattern) mayMatch(s string) bool {
	if p.candidates != nil {
		return p.may(s) && len(p.candidates(s)) > 0
	}
	return p.prefix == "" || strings.Contains(s, p.prefix)
}

// findAll returns the matches of the pattern in s as
// regexp.FindAllStringSubmatchIndex does.
func (p *pattern) findAll(s string) [][]int {
	if p.candidates == nil {
		if p.prefix != "" && !strings.Contains(s, p.prefix) {
			return nil
		}
		return p.re.FindAllStringSubmatchIndex(s, -1)
	}
	if !p.may(s) {
		return nil
	}
	var out [][]int
	next := 0 // the end of the last match: no match starts before it
	skip := 0 // a failed candidate's resume point
	for _, c := range p.candidates(s) {
		if c.start < next || c.start < skip {
			continue
		}
		if p.wordStart && c.start > 0 && isWordByte(s[c.start-1]) {
			skip = c.resume
			continue
		}
		loc := p.anchored.FindStringSubmatchIndex(s[c.start:])
		if loc == nil || loc[1] == 0 {
			skip = c.resume
			continue
		}
		for i := range loc {
			if loc[i] >= 0 {
				loc[i] += c.start
			}
		}
		out = append(out, loc)
		next = loc[1]
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

type finder struct {
	candidates func(s string) []candidate
	wordStart  bool
	may        func(s string) bool // see pattern.may
	needs      string              // see pattern.needs
}

// finders are the candidate scans of the default patterns, by expression
// (DefaultRedactRules). Each returns every position where its pattern can
// start a match; missing one would miss a secret, so each is the plain
// literal that every match starts with, or a check that every match
// passes. Their needs are the rarest bytes of what every match holds
// (the I of AKIA and AIza, the dash after xox, the slash of "://"), chosen
// so that what most short strings hold (a tool's name, "text", a number)
// has none.
var finders = map[string]finder{
	`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)`:                                   {bearerCandidates, true, mayBearer, "bB"},
	`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`:            {jwtCandidates, true, contains(".eyJ"), "."},
	`\bsk-[A-Za-z0-9_-]{20,}`:                                                    {literal("sk-"), true, contains("sk-"), "-"},
	`\bgh[pousr]_[A-Za-z0-9]{30,}`:                                               {ghCandidates, true, mayGH, "_"},
	`\bgithub_pat_[A-Za-z0-9_]{22,}`:                                             {literal("github_pat_"), true, contains("github_pat_"), "_"},
	`\bAKIA[0-9A-Z]{16}\b`:                                                       {literal("AKIA"), true, contains("AKIA"), "I"},
	`\bxox[abposr]-[A-Za-z0-9-]{10,}`:                                            {literal("xox"), true, contains("xox"), "-"},
	`\bAIza[0-9A-Za-z_-]{35}`:                                                    {literal("AIza"), true, contains("AIza"), "I"},
	`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`: {pemCandidates, false, contains("-----BEGIN "), "-"},
	`(?i)[?&](?:api[_-]?key|access[_-]?token|auth[_-]?token|token|secret|password|sig|signature|key)=([^&#\s"]+)`: {queryCandidates, false, mayQuery, "?&"},
	`[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@"]+:([^/\s@"]+)@`:                                                           {userinfoCandidates, false, mayUserinfo, "/"},
}

// The finders' may (pattern.may): each is true where its finder finds a
// candidate, by the rarest byte of what every candidate holds.

func contains(lit string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, lit) }
}

// anyAt reports whether ok is true at some index of c in s.
func anyAt(s string, c byte, ok func(i int) bool) bool {
	for at := 0; ; {
		i := strings.IndexByte(s[at:], c)
		if i < 0 {
			return false
		}
		if ok(at + i) {
			return true
		}
		at += i + 1
	}
}

// mayBearer: "bearer" in any case before white space, by its "b".
func mayBearer(s string) bool {
	b := func(i int) bool {
		return i+6 < len(s) && isSpace(s[i+6]) && strings.EqualFold(s[i:i+6], "bearer")
	}
	return anyAt(s, 'b', b) || anyAt(s, 'B', b)
}

// mayGH: "gh" and one byte before an underscore.
func mayGH(s string) bool {
	return anyAt(s, '_', func(i int) bool { return i >= 3 && s[i-3] == 'g' && s[i-2] == 'h' })
}

func mayQuery(s string) bool {
	return strings.IndexByte(s, '?') >= 0 || strings.IndexByte(s, '&') >= 0
}

// mayUserinfo: "://", by its slashes.
func mayUserinfo(s string) bool {
	return anyAt(s, '/', func(i int) bool { return i >= 1 && i+1 < len(s) && s[i-1] == ':' && s[i+1] == '/' })
}

// each calls f with every index of lit in s.
func each(s, lit string, f func(i int)) {
	for at := 0; ; {
		i := strings.Index(s[at:], lit)
		if i < 0 {
			return
		}
		f(at + i)
		at += i + 1
	}
}

func literal(lit string) func(string) []candidate {
	return func(s string) []candidate {
		var out []candidate
		each(s, lit, func(i int) { out = append(out, candidate{i, i + 1}) })
		return out
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// bearerCandidates finds "bearer" in any case followed by white space: by
// its "b", whose two cases are searched for separately.
func bearerCandidates(s string) []candidate {
	var out []candidate
	for _, b := range []string{"b", "B"} {
		each(s, b, func(i int) {
			if i+6 < len(s) && isSpace(s[i+6]) && strings.EqualFold(s[i:i+6], "bearer") {
				out = append(out, candidate{i, i + 1})
			}
		})
	}
	sortCandidates(out)
	return out
}

// jwtCandidates finds "eyJ" whose run of base64url characters ends with
// ".eyJ" (every match does); one run is scanned once however many "eyJ" it
// holds.
func jwtCandidates(s string) []candidate {
	var out []candidate
	runEnd := -1
	each(s, "eyJ", func(i int) {
		if i >= runEnd {
			runEnd = i + 3
			for runEnd < len(s) && isB64URL(s[runEnd]) {
				runEnd++
			}
		}
		if strings.HasPrefix(s[runEnd:], ".eyJ") {
			out = append(out, candidate{i, i + 1})
		}
	})
	return out
}

func isB64URL(c byte) bool { return isWordByte(c) || c == '-' }

// ghCandidates finds gh[pousr]_ by its underscore.
func ghCandidates(s string) []candidate {
	var out []candidate
	each(s, "_", func(i int) {
		if i >= 3 && s[i-3] == 'g' && s[i-2] == 'h' && strings.IndexByte("pousr", s[i-1]) >= 0 {
			out = append(out, candidate{i - 3, i - 2})
		}
	})
	return out
}

// pemCandidates finds "-----BEGIN " when an "-----END " follows somewhere.
func pemCandidates(s string) []candidate {
	if !strings.Contains(s, "-----BEGIN ") {
		return nil
	}
	last := strings.LastIndex(s, "-----END ")
	if last < 0 {
		return nil
	}
	var out []candidate
	each(s[:last], "-----BEGIN ", func(i int) { out = append(out, candidate{i, i + 1}) })
	return out
}

// queryCandidates finds "?" and "&" followed by a letter that starts one of
// the parameter names (a, k, p, s, t in any case).
func queryCandidates(s string) []candidate {
	var out []candidate
	for _, sep := range []string{"?", "&"} {
		each(s, sep, func(i int) {
			if i+1 < len(s) && strings.IndexByte("akpstAKPST", s[i+1]) >= 0 {
				out = append(out, candidate{i, i + 1})
			}
		})
	}
	sortCandidates(out)
	return out
}

// userinfoCandidates finds "://" followed by user:password@ and goes back
// over the scheme to its first letter: the leftmost start that can match
// there (every start in the same scheme matches or fails alike, so a failure
// resumes after the "://").
func userinfoCandidates(s string) []candidate {
	var out []candidate
	each(s, "://", func(k int) {
		// [^/\s:@"]+ then ':', then [^/\s@"]+ then '@'.
		u := k + 3 + strings.IndexFunc(s[k+3:], func(r rune) bool { return r < 0x80 && (isSpace(byte(r)) || strings.IndexByte(`/:@"`, byte(r)) >= 0) })
		if u <= k+3 || s[u] != ':' {
			return
		}
		a := u + 1 + strings.IndexFunc(s[u+1:], func(r rune) bool { return r < 0x80 && (isSpace(byte(r)) || strings.IndexByte(`/@"`, byte(r)) >= 0) })
		if a <= u+1 || s[a] != '@' {
			return
		}
		j := k
		for j > 0 && isSchemeByte(s[j-1]) {
			j--
		}
		for j < k && !isLetter(s[j]) {
			j++
		}
		if j < k {
			out = append(out, candidate{j, k + 1})
		}
	})
	return out
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isSchemeByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '+' || c == '.' || c == '-'
}

func sortCandidates(cs []candidate) {
	slices.SortFunc(cs, func(a, b candidate) int { return a.start - b.start })
}
