package livelog

import (
	"regexp"
	"strings"

	"github.com/mcpmock/mcpmock/cassettes"
)

// The live log shows short arguments and results; secrets in them are
// redacted by the default rules of cassettes (the patterns, and the values
// of secret-named members), so that a token never reaches a terminal or a
// CI log. The expressions are compiled once and only read after.
var (
	logPatterns = func() []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, p := range cassettes.DefaultRedactRules().Patterns {
			out = append(out, regexp.MustCompile(p))
		}
		return out
	}()
	// memberRE finds "name":"string value" pairs in compact JSON.
	memberRE = regexp.MustCompile(`"((?:[^"\\]|\\.){1,64})":"((?:[^"\\]|\\.)*)"`)
)

// redactText replaces the secrets that the default rules know in s.
func redactText(s string) string {
	if strings.Contains(s, `":"`) {
		s = memberRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := memberRE.FindStringSubmatch(m)
			if !cassettes.SecretName(sub[1]) || sub[2] == cassettes.Redacted {
				return m
			}
			return `"` + sub[1] + `":"` + cassettes.Redacted + `"`
		})
	}
	for _, re := range logPatterns {
		if !re.MatchString(s) {
			continue
		}
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			sub := re.FindStringSubmatchIndex(m)
			if len(sub) >= 4 && sub[2] >= 0 {
				return m[:sub[2]] + cassettes.Redacted + m[sub[3]:]
			}
			return cassettes.Redacted
		})
	}
	return s
}
