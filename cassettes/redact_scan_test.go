package cassettes

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFindersMatchRegexps checks that each default pattern's finder gives
// the matches of its regular expression over the whole string, on strings
// made of pieces of secrets, near misses and separators.
func TestFindersMatchRegexps(t *testing.T) {
	pieces := []string{"Bearer ", "bEaReR\t", "bearer", "xbearer ", "eyJ", "abcdefgh", "ABCDEFGHIJ", ".", "sk-", "gh", "p_", "o_",
		"github_pat_", "AKIA", "XYZ0123456789ABCD", "xoxb-", "xox", "AIza", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN ",
		"-----END RSA PRIVATE KEY-----", "-----END ", "?api_key=", "&token=", "?Sig=", "&key=", "?b=", "https://", "a+b.c-d://",
		"://", "user:pw@", ":", "@", "/", " ", "\n", "x", "0123456789", "_", "-", "=", "\"", "é", "+", "&", "?",
		"eyJabcdefgh.", "ghp_", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123", "AKIA0123456789ABCDEF"}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, expr := range DefaultRedactRules().Patterns {
		p, err := compilePattern(expr)
		if err != nil {
			t.Fatal(err)
		}
		if p.candidates == nil {
			t.Fatalf("default pattern %q has no finder", expr)
		}
		found := 0
		for range 20000 {
			s := joinRandom(rng, pieces, 24)
			if len(p.candidates(s)) > 0 && !p.may(s) {
				t.Fatalf("pattern %q on %q: candidates, where may says none", expr, s)
			}
			want := p.re.FindAllStringSubmatchIndex(s, -1)
			got := p.findAll(s)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("pattern %q on %q (-regexp +finder):\n%s", expr, s, diff)
			}
			for _, loc := range want {
				if !strings.ContainsAny(s[loc[0]:loc[1]], p.needs) {
					t.Fatalf("pattern %q: the match %q holds none of its needs %q", expr, s[loc[0]:loc[1]], p.needs)
				}
			}
			found += len(want)
		}
		if found == 0 {
			t.Errorf("pattern %q: no string of the test matched", expr)
		}
	}
}

// A process compiles each pattern once: `mcpmock record` builds four
// redactors of the same rules before its first message (44 compilations
// of the default patterns before this cache, 11 with it).
func TestPatternsCompiledOnce(t *testing.T) {
	rules := DefaultRedactRules().Merge(&RedactRules{Patterns: []string{`tok-[0-9]{6}`}})
	a, err := NewRedactor(rules)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewRedactor(rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.patterns) != len(rules.Patterns) || len(b.patterns) != len(a.patterns) {
		t.Fatalf("compiled %d and %d patterns of %d", len(a.patterns), len(b.patterns), len(rules.Patterns))
	}
	for i := range a.patterns {
		if a.patterns[i] != b.patterns[i] {
			t.Errorf("pattern %q was compiled twice", rules.Patterns[i])
		}
	}
	// A shared pattern still redacts in each redactor.
	for _, rd := range []*Redactor{a, b} {
		c := &Cassette{Interactions: []Interaction{{Request: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"tok-123456"}}`)}}}
		if n := rd.Redact(c); n != 1 || strings.Contains(string(c.Interactions[0].Request), "tok-123456") {
			t.Errorf("redacted %d values: %s", n, c.Interactions[0].Request)
		}
	}
	// A bad pattern is an error each time, and is not kept.
	for range 2 {
		if _, err := NewRedactor(&RedactRules{Patterns: []string{`(`}}); err == nil {
			t.Fatal("a bad pattern compiled")
		}
	}
}

// A short string is looked at byte by byte first (Redactor.clear): what it
// hides is what the scans of every pattern hide, for the default rules,
// with literal values, and for a pattern whose needs are unknown.
func TestShortStringsRedactAlike(t *testing.T) {
	pieces := []string{"Bearer ", "bearer", "eyJabcdefgh", ".eyJ", "abcdefgh", ".", "sk-", "ghp_", "github_pat_", "AKIA",
		"AIza", "0123456789ABCDEF", "xoxb-", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "?token=",
		"&key=", "https://", "user:pw@", "tok-", "hunter2", "echo", "text", " ", "\n", "é", "m0", "_", "-", "/", "?", "&"}
	for _, rules := range []*RedactRules{
		DefaultRedactRules(),
		DefaultRedactRules().Merge(&RedactRules{Values: []string{"hunter2"}}),
		DefaultRedactRules().Merge(&RedactRules{Patterns: []string{`(?i)tok-[a-z]+`}}),
	} {
		rd, err := NewRedactor(rules)
		if err != nil {
			t.Fatal(err)
		}
		scan := *rd
		scan.short = nil
		if rd.short == nil && len(rules.Patterns) == len(DefaultRedactRules().Patterns) {
			t.Fatalf("rules %v: no byte filter", rules)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		found := 0
		for range 20000 {
			s := joinRandom(rng, pieces, 10)
			got, n := rd.text(s)
			want, m := scan.text(s)
			if got != want || n != m {
				t.Fatalf("rules %v on %q: %q (%d), scanned %q (%d)", rules, s, got, n, want, m)
			}
			if rd.mayHoldText(s) != scan.mayHoldText(s) && m > 0 {
				t.Fatalf("rules %v on %q: may hold no secret, where the scan finds %d", rules, s, m)
			}
			found += m
		}
		if found == 0 {
			t.Errorf("rules %v: no string of the test held a secret", rules)
		}
	}
}

// joinRandom joins fewer than n pieces drawn at random.
func joinRandom(rng *rand.Rand, pieces []string, n int) string {
	var b strings.Builder
	for range rng.IntN(n) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}
