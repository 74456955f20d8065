package cassettes

import (
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
			var b strings.Builder
			for range rng.IntN(24) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			s := b.String()
			want := p.re.FindAllStringSubmatchIndex(s, -1)
			got := p.findAll(s)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("pattern %q on %q (-regexp +finder):\n%s", expr, s, diff)
			}
			found += len(want)
		}
		if found == 0 {
			t.Errorf("pattern %q: no string of the test matched", expr)
		}
	}
}
